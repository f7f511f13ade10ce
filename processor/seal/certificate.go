package seal

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/evidence"
	"github.com/esign-svc/esign/shared/pdf/certificate"
)

// timelineOrder is the order of a slot's transitions recorded at the same instant.
var timelineOrder = []esign.SlotState{
	esign.SlotPending, esign.SlotActivated, esign.SlotViewed, esign.SlotOTPVerified,
	esign.SlotSigned, esign.SlotDeclined, esign.SlotExpired,
}

// buildCertificate assembles the evidence certificate (spec "Evidence certificate"). The OTP
// record and the transfers come from the audit events slot.otp_* and slot.transfer_*: until
// the OTP and cross-device features write them, they are empty. Errors: *failure when a
// signer's recorded consents do not read back (the certificate is never built with a gap).
func buildCertificate(sess *esign.Session, slots []esign.Slot, sigs map[int]esign.StoredSignature,
	events []esign.AuditEvent, now time.Time, engine string) (certificate.Certificate, error) {
	c := certificate.Certificate{
		DocumentTitle: sess.Title(), CorrelationID: sess.CorrelationID, DocumentID: sess.DocumentID,
		RenderedPDFHash: sess.PDFHash, GroupID: sess.GroupID, TenantID: sess.TenantID,
		SigningMode: string(sess.SigningMode), SessionExpires: sess.ExpiresAt, CompletedAt: now,
		EngineVersion: engine,
	}
	bySlot := map[int][]esign.AuditEvent{}
	for _, ev := range events {
		bySlot[ev.Slot] = append(bySlot[ev.Slot], ev)
	}
	for _, sl := range slots {
		evs := bySlot[sl.Index]
		s := certificate.Signer{
			SlotIndex: sl.Index, Role: sl.Role, Name: signerName(sl), EmailHash: sl.EmailHash,
			CompletionCondition: string(sl.Condition), State: string(sl.State),
			Timeline: timeline(sl, evs), DeclineReason: declineReason(evs), SignatureImage: sigs[sl.Index].PNG,
		}
		s.IPAddress, s.UserAgent = lastSeen(sl, evs)
		var err error
		if s.Consents, err = consents(sl, sigs[sl.Index]); err != nil {
			return certificate.Certificate{}, fail(fmt.Sprintf("the consents of slot %d are unreadable", sl.Index), err)
		}
		s.OTP = otpRecord(sl, evs)
		s.Transfers = transfers(evs)
		c.Signers = append(c.Signers, s)
	}
	return c, nil
}

// timeline is the slot's state transitions in time order (transitions of the same instant in
// timelineOrder). Pending is when the signer was invited: the slot's first slot.invited event
// (for a later signer of a sequential session, when the one before finished), not the
// session's creation; a slot never invited shows no pending time.
func timeline(sl esign.Slot, events []esign.AuditEvent) []certificate.Transition {
	var out []certificate.Transition
	for _, st := range timelineOrder {
		at, ok := sl.Timeline[st]
		if st == esign.SlotPending {
			at, ok = invitedAt(sl, events)
		}
		if ok {
			out = append(out, certificate.Transition{State: string(st), At: at})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// invitedAt is the time of the slot's first invitation; a slot marked invited without an
// invitation event falls back to its recorded pending time.
func invitedAt(sl esign.Slot, events []esign.AuditEvent) (time.Time, bool) {
	for _, ev := range events {
		if ev.Kind == esign.EvSlotInvited {
			return ev.At, true
		}
	}
	if !sl.Invited {
		return time.Time{}, false
	}
	at, ok := sl.Timeline[esign.SlotPending]
	return at, ok
}

// lastSeen is the IP address and user agent of the signer's last recorded action: those of
// the signature when the slot is signed, else those of the slot's last event the signer made
// (declining, viewing, ...), so that a signer who declined or let the session expire keeps them.
func lastSeen(sl esign.Slot, events []esign.AuditEvent) (string, string) {
	if sl.IP != "" || sl.UserAgent != "" {
		return sl.IP, sl.UserAgent
	}
	for i := len(events) - 1; i >= 0; i-- {
		if ev := events[i]; ev.ActorKind == "signer" && (ev.IP != "" || ev.UserAgent != "") {
			return ev.IP, ev.UserAgent
		}
	}
	return "", ""
}

// declineReason is the reason recorded with the slot's slot.declined event, cleaned as the
// evidence bundle cleans it (a reason that looks like an e-mail address or a phone number is
// in neither).
func declineReason(events []esign.AuditEvent) string {
	for _, ev := range events {
		if ev.Kind == esign.EvSlotDeclined {
			r, _ := evidence.Clean(ev.Data["reason"]).(string)
			return r
		}
	}
	return ""
}

// consents are the slot's recorded acceptances, or else those stored with its signature. The
// copy stored with the signature is read whenever it is there: a copy that does not decode is
// corrupt evidence, as is an acceptance time that does not parse. Errors: the decoder's.
func consents(sl esign.Slot, sig esign.StoredSignature) ([]certificate.Consent, error) {
	list := sl.Consents
	if sig.Consents != "" {
		var stored []esign.ConsentAcceptance
		if err := json.Unmarshal([]byte(sig.Consents), &stored); err != nil {
			return nil, fmt.Errorf("the signature row's consents: %w", err)
		}
		if len(list) == 0 {
			list = stored
		}
	}
	var out []certificate.Consent
	for _, a := range list {
		at, err := time.Parse(time.RFC3339Nano, a.AcceptedAt)
		if err != nil {
			return nil, fmt.Errorf("the acceptance time of %s: %w", a.ID, err)
		}
		out = append(out, certificate.Consent{Key: a.ID, Version: a.Version, Language: a.Language, Text: a.Text, AcceptedAt: at})
	}
	return out, nil
}

// otpRecord summarises the slot's OTP events: channel and masked destination from the last
// slot.otp_sent (data channel, destination), the verification time, and the attempts (failures plus the success).
func otpRecord(sl esign.Slot, events []esign.AuditEvent) *certificate.OTPRecord {
	var r certificate.OTPRecord
	seen := false
	for _, ev := range events {
		switch ev.Kind {
		case "slot.otp_sent":
			seen = true
			r.SentAt = ev.At
			if ch, ok := ev.Data["channel"].(string); ok {
				r.Channel = ch
			}
			for _, key := range []string{"destination", "maskedDestination"} {
				if m, ok := ev.Data[key].(string); ok && strings.Contains(m, "*") {
					r.MaskedDestination = m // masked only: a plain address is never shown
				}
			}
		case "slot.otp_failed":
			seen = true
			r.Attempts++
		case "slot.otp_verified":
			seen = true
			r.Attempts++
			r.VerifiedAt = ev.At
		}
	}
	if !seen {
		return nil
	}
	if r.Channel == "" && sl.RequiresOTP() {
		r.Channel = string(sl.OTPChannel)
	}
	return &r
}

// transfers lists the slot's cross-device transfer events.
func transfers(events []esign.AuditEvent) []certificate.Transfer {
	var out []certificate.Transfer
	for _, ev := range events {
		if name, ok := strings.CutPrefix(ev.Kind, "slot.transfer_"); ok {
			out = append(out, certificate.Transfer{Event: name, At: ev.At, IPAddress: ev.IP, UserAgent: ev.UserAgent})
		}
	}
	return out
}
