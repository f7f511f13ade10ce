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
	styleVerbatim // consent texts and the verifier command: indented
)

// block is one paragraph (text in a style) or, when rows is non-nil, one table.
type block struct {
	style style
	text  string
	rows  []row
	rtl   bool // a paragraph of a right-to-left language: set flush right
}

// row is one table row: a label and its value lines, or a signature image.
type row struct {
	label  string
	values []string
	image  []byte // PNG shown in the value cell; values are then unused
}

// VerifyCommand is the offline verifier's command line the certificate prints.
const VerifyCommand = "esign-verify --pdf signed.pdf --bundle evidence.jsonl"

// blocks returns the certificate's content in reading order, before wrapping.
func (c Certificate) blocks() []block {
	var bs []block
	add := func(s style, format string, a ...any) {
		bs = append(bs, block{style: s, text: fmt.Sprintf(format, a...)})
	}
	kv := func(k, v string) { add(styleBody, "%s: %s", k, orDash(v)) }
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
		bs = append(bs, s.blocks()...)
	}
	add(styleHeading, "How to verify")
	if lv := levelSentence(c.SealLevel); lv != "" {
		add(styleBody, "%s", lv)
	}
	add(styleBody, "The document is sealed with a PAdES signature that covers every page, these certificate pages included. "+
		"The evidence bundle (evidence.jsonl) holds the session's audit events as a hash chain; its head hash is printed above "+
		"and stored in the document information dictionary under %s. To check the seal, the bundle's chain and that the two "+
		"belong together, run:", InfoKeyEvidenceHead)
	add(styleVerbatim, "%s", VerifyCommand)
	add(styleBody, "The verifier must report the evidence bundle head %s.", orDash(c.EvidenceHeadHash))
	return bs
}

// levelSentence says what the seal's PAdES level means for a relying party.
func levelSentence(level string) string {
	switch level {
	case "B-B":
		return "Seal level: PAdES B-B (a signature without a timestamp; it can be checked while the seal certificate is valid)."
	case "B-T":
		return "Seal level: PAdES B-T (the signature carries a trusted timestamp of when it was made)."
	case "B-LT":
		return "Seal level: PAdES B-LT (timestamped; the certificates of the seal and of the timestamp authority and their " +
			"revocation answers are embedded in the document, so the check needs no network)."
	case "B-LTA":
		return "Seal level: PAdES B-LTA (timestamped; the certificates and revocation answers are embedded in the document and " +
			"an archive timestamp covers them, renewed before it expires, so the seal stays verifiable offline after its " +
			"certificates expire). The verifier reports the level and when the archive timestamp must be renewed."
	}
	return ""
}

// rows is the signer's table.
func (s Signer) rows() []row {
	rs := []row{{label: "Signature", image: s.SignatureImage}}
	if len(s.SignatureImage) == 0 {
		rs[0] = row{label: "Signature", values: []string{"none (" + orDash(s.State) + ")"}}
	}
	kv := func(k, v string) { rs = append(rs, row{label: k, values: []string{orDash(v)}}) }
	kv("Slot index", strconv.Itoa(s.SlotIndex))
	kv("Role", s.Role)
	kv("Name", s.Name)
	kv("E-mail (HMAC-SHA256)", s.EmailHash)
	kv("Completion condition", s.CompletionCondition)
	kv("Final state", s.State)
	kv("IP address", s.IPAddress)
	kv("User agent", s.UserAgent)
	if s.State == "declined" || s.DeclineReason != "" {
		reason := s.DeclineReason
		if reason == "" {
			reason = "none given"
		}
		kv("Decline reason", reason)
	}
	var tl []string
	for _, t := range s.Timeline {
		tl = append(tl, t.State+": "+FormatTime(t.At))
	}
	rs = append(rs, row{label: "State timeline", values: orNone(tl)})
	if o := s.OTP; o != nil {
		rs = append(rs, row{label: "One-time passcode verification", values: []string{
			"Channel: " + orDash(o.Channel), "Sent to: " + orDash(o.MaskedDestination), "Sent: " + FormatTime(o.SentAt),
			"Verified: " + FormatTime(o.VerifiedAt), "Attempts: " + strconv.Itoa(o.Attempts)}})
	}
	if len(s.Transfers) > 0 {
		var ts []string
		for _, t := range s.Transfers {
			ts = append(ts, fmt.Sprintf("%s: %s, IP address %s, user agent %s", t.Event, FormatTime(t.At), orDash(t.IPAddress), orDash(t.UserAgent)))
		}
		rs = append(rs, row{label: "Cross-device transfers", values: ts})
	}
	return rs
}

func orNone(vs []string) []string {
	if len(vs) == 0 {
		return []string{"-"}
	}
	return vs
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
