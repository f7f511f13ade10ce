package certificate

import (
	"fmt"
	"strconv"
)

// style of a line of the certificate.
type style int

const (
	styleTitle style = iota
	styleHeading
	styleSubheading
	styleBody
	styleVerbatim // consent texts: indented
)

type line struct {
	style style
	text  string
}

// Lines returns the certificate's text in reading order, before wrapping. It is what the
// rendered pages show, one entry per logical line.
func (c Certificate) lines() []line {
	var ls []line
	add := func(s style, format string, a ...any) { ls = append(ls, line{s, fmt.Sprintf(format, a...)}) }
	kv := func(k, v string) {
		if v == "" {
			v = "-"
		}
		add(styleBody, "%s: %s", k, v)
	}
	add(styleTitle, "Evidence certificate")
	add(styleHeading, "Document")
	kv("Title", c.DocumentTitle)
	kv("Document ID", c.DocumentID)
	kv("Correlation ID", c.CorrelationID)
	kv("SHA-256 of the rendered PDF", c.RenderedPDFHash)
	add(styleHeading, "Session")
	kv("Session ID", c.GroupID)
	kv("Tenant ID", c.TenantID)
	kv("Signing mode", c.SigningMode)
	kv("Session expires", FormatTime(c.SessionExpires))
	kv("Completed", FormatTime(c.CompletedAt))
	kv("Engine version", c.EngineVersion)
	kv("Evidence bundle head hash", c.EvidenceHeadHash)
	for _, s := range c.Signers {
		add(styleHeading, "Signer %d: %s", s.SlotIndex+1, orDash(s.Name))
		kv("Slot index", strconv.Itoa(s.SlotIndex))
		kv("Role", s.Role)
		kv("Name", s.Name)
		kv("E-mail (HMAC-SHA256)", s.EmailHash)
		kv("Completion condition", s.CompletionCondition)
		kv("Final state", s.State)
		kv("IP address", s.IPAddress)
		kv("User agent", s.UserAgent)
		add(styleSubheading, "State timeline")
		for _, t := range s.Timeline {
			add(styleBody, "%s: %s", t.State, FormatTime(t.At))
		}
		if s.OTP != nil {
			add(styleSubheading, "One-time passcode verification")
			kv("Channel", s.OTP.Channel)
			kv("Sent to", s.OTP.MaskedDestination)
			kv("Sent", FormatTime(s.OTP.SentAt))
			kv("Verified", FormatTime(s.OTP.VerifiedAt))
			kv("Attempts", strconv.Itoa(s.OTP.Attempts))
		}
		if len(s.Consents) > 0 {
			add(styleSubheading, "Consent")
			for i, cs := range s.Consents {
				add(styleBody, "Statement %d (%s, version %s) accepted %s:", i+1, orDash(cs.Key), orDash(cs.Version), FormatTime(cs.AcceptedAt))
				add(styleVerbatim, "%s", cs.Text)
			}
		}
		if len(s.Transfers) > 0 {
			add(styleSubheading, "Cross-device transfers")
			for _, t := range s.Transfers {
				add(styleBody, "%s: %s, IP address %s, user agent %s", t.Event, FormatTime(t.At), orDash(t.IPAddress), orDash(t.UserAgent))
			}
		}
	}
	return ls
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
