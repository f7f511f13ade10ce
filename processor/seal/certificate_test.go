package seal

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/pdf/certificate"
)

func TestOTPRecordAndTransfers(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 22, 10, 0, 0, 1, time.UTC)
	sl := esign.Slot{Index: 0, OTPChannel: esign.OTPSMS}
	tests := []struct {
		name   string
		events []sessionstore.AuditEvent
		otp    *certificate.OTPRecord
		tr     []certificate.Transfer
	}{
		{"no OTP or transfer events", []sessionstore.AuditEvent{{Kind: "slot.viewed", At: at}}, nil, nil},
		{"sent, failed once, verified", []sessionstore.AuditEvent{
			{Kind: "slot.otp_sent", At: at, Data: map[string]any{"channel": "sms", "destination": "+44******789"}},
			{Kind: "slot.otp_failed", At: at.Add(time.Second)},
			{Kind: "slot.otp_verified", At: at.Add(2 * time.Second)},
		}, &certificate.OTPRecord{Channel: "sms", MaskedDestination: "+44******789", SentAt: at, VerifiedAt: at.Add(2 * time.Second), Attempts: 2}, nil},
		{"an unmasked destination is not shown", []sessionstore.AuditEvent{
			{Kind: "slot.otp_sent", At: at, Data: map[string]any{"destination": "+447700900789"}},
		}, &certificate.OTPRecord{Channel: "sms", SentAt: at}, nil},
		{"transfers", []sessionstore.AuditEvent{
			{Kind: "slot.transfer_created", At: at, IP: "198.51.100.1", UserAgent: "desk"},
			{Kind: "slot.transfer_redeemed", At: at.Add(time.Minute), IP: "198.51.100.2", UserAgent: "phone"},
		}, nil, []certificate.Transfer{{Event: "created", At: at, IPAddress: "198.51.100.1", UserAgent: "desk"},
			{Event: "redeemed", At: at.Add(time.Minute), IPAddress: "198.51.100.2", UserAgent: "phone"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.otp, otpRecord(sl, tt.events)); diff != "" {
				t.Errorf("otp (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.tr, transfers(tt.events)); diff != "" {
				t.Errorf("transfers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCertificateIsExact seals a sequential session whose first signer passes OTP before
// viewing, whose second (optional) signer declines with a reason, and whose third signs, and
// reads the certificate's text: each timeline is in time order, each pending time is the
// signer's invitation (for the later signers when the one before finished, not the session's
// creation), the declined signer keeps the IP address, user agent, time and reason recorded,
// and the two drawings are in it.
func TestCertificateIsExact(t *testing.T) {
	t.Parallel()
	requireTools(t)
	ctx := context.Background()
	e := newEnv(t)
	two := twoSigners()
	signers := []signer{two[0], {role: "witness", name: "Carol Witness"}, two[1]}
	gid, _, created := e.createSession(t, signers, "", esign.ModeSequential, func(sl *esign.Slot) {
		switch sl.Index {
		case 0:
			sl.OTPChannel = esign.OTPEmail
		case 1:
			sl.Condition = esign.Optional
		}
	})
	as := func(ip, ua string) esign.Actor { return esign.Actor{Kind: "signer", ID: "s", IP: ip, UserAgent: ua} }
	desk, declinerIP, declinerUA := as("203.0.113.7", "Mozilla/5.0 (test)"), "198.51.100.23", "DeclinerUA/1.0 (test)"
	step := func(actor esign.Actor, f func(*esign.Session, []esign.Slot) (esign.Change, error)) {
		e.applyAs(t, gid, actor, f)
	}
	consentAll := []string{"document_reviewed", "electronic_signature", "legally_binding"}

	at0 := created.Add(time.Second)
	otpVerified, viewed0, signed0 := at0.Add(80*time.Millisecond), at0.Add(100*time.Millisecond), at0.Add(300*time.Millisecond)
	step(desk, func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.Activate(s, sl, 0, at0, nil)
	})
	step(desk, func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.SendOTP(s, sl, 0, at0.Add(50*time.Millisecond), esign.OTPEmail, false, "code-hash", "a***@example.com", 0)
	})
	step(desk, func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		c, _, err := esign.VerifyOTP(s, sl, 0, otpVerified, func(string) bool { return true }, 0)
		return c, err
	})
	step(desk, func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.MarkViewed(s, sl, 0, viewed0, nil)
	})
	step(desk, func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.Consent(s, sl, 0, at0.Add(200*time.Millisecond), consentAll)
	})
	e.signSlot(t, gid, 0, signers[0], signed0, "203.0.113.7", "Mozilla/5.0 (test)")

	at1 := created.Add(2 * time.Second)
	declinedAt, reason := at1.Add(200*time.Millisecond), "The delivery date in clause 4 is not the one we agreed."
	step(desk, func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.Activate(s, sl, 1, at1, nil)
	})
	step(desk, func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.MarkViewed(s, sl, 1, at1.Add(100*time.Millisecond), nil)
	})
	step(as(declinerIP, declinerUA), func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.Decline(s, sl, 1, declinedAt, reason, nil)
	})

	at2 := created.Add(3 * time.Second)
	step(desk, func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.Activate(s, sl, 2, at2, nil)
	})
	step(desk, func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.MarkViewed(s, sl, 2, at2.Add(100*time.Millisecond), nil)
	})
	step(desk, func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.Consent(s, sl, 2, at2.Add(200*time.Millisecond), consentAll)
	})
	e.signSlot(t, gid, 2, signers[2], at2.Add(300*time.Millisecond), "203.0.113.7", "Mozilla/5.0 (test)")

	sess, _, err := e.store.Load(ctx, gid)
	if err != nil || sess.State != esign.SessionSealing {
		t.Fatalf("session before the seal: %v, %v", sess, err)
	}
	r := apptest.Serve(t, funcproto.QueueHandler(e.job.Handle), apptest.QueueData(t, esign.SealMessage{GroupID: gid, TenantID: sess.TenantID}))
	if r.Status != 200 {
		t.Fatalf("status %d, logs %v", r.Status, r.Logs)
	}
	base := sess.TenantID + "/" + gid + "/"
	cert, ok := e.readBlob(t, "signed", base+"certificate.pdf")
	if !ok {
		t.Fatal("certificate.pdf missing")
	}
	text := pdftotext(t, cert)
	flat := spaces.ReplaceAllString(text, "")
	at := func(state string, tm time.Time) string { return state + ":" + certificate.FormatTime(tm) }
	find := func(s string) int {
		t.Helper()
		i := strings.Index(flat, spaces.ReplaceAllString(s, ""))
		if i < 0 {
			t.Errorf("certificate text lacks %q", s)
		}
		return i
	}

	// time order: the first signer passed OTP before viewing the document
	if v, o := find(at("viewed", viewed0)), find(at("otp_verified", otpVerified)); o > v {
		t.Errorf("otp_verified (%s) is printed after viewed (%s)", otpVerified, viewed0)
	}
	// pending is each signer's invitation: the creation for the first, the end of the turn
	// before for the others
	find(at("pending", created))
	find(at("pending", signed0))
	find(at("pending", declinedAt))
	if n := strings.Count(flat, at("pending", created)); n != 1 {
		t.Errorf("%d signers are shown pending since the session's creation, want only the first", n)
	}
	// the declined signer's facts
	for _, s := range []string{at("declined", declinedAt), "Decline reason" + reason, declinerIP, declinerUA, "Signaturenone(declined)"} {
		find(s)
	}
	if t.Failed() {
		t.Logf("certificate text:\n%s", text)
	}
	bundle, _ := e.readBlob(t, "evidence", base+"evidence.jsonl")
	if !bytes.Contains(bundle, []byte(reason)) {
		t.Error("the evidence bundle lacks the decline reason")
	}
	out, err := exec.Command("pdfimages", "-list", writeTemp(t, "certificate.pdf", cert)).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfimages: %v\n%s", err, out)
	}
	images := 0
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[2] == "image" {
			images++
		}
	}
	if images != 2 {
		t.Errorf("the certificate shows %d drawings, want the two signers':\n%s", images, out)
	}
}

// TestCertificateTitleIsTheDocumentsTitle reads the sealed certificate's text: its title is the
// session's document title (a render's title, or the create request's documentName), else the
// documentId; never the docType (spec 000 evidence certificate: "title").
func TestCertificateTitleIsTheDocumentsTitle(t *testing.T) {
	t.Parallel()
	requireTools(t)
	for _, tc := range []struct{ name, title, want string }{
		{"the document's title", "Lease agreement — Flat 4B, Ωmega Street", "Lease agreement — Flat 4B, Ωmega Street"},
		{"no title: the documentId", "", "DOC-4711"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			f := e.sealingSession(t, twoSigners()[:1], "")
			e.applyStep(t, f.sess.GroupID, func(s *esign.Session, _ []esign.Slot) (esign.Change, error) {
				s.DocumentTitle = tc.title
				return esign.Change{}, nil
			})
			r := apptest.Serve(t, funcproto.QueueHandler(e.job.Handle), apptest.QueueData(t, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: f.sess.TenantID}))
			if r.Status != 200 {
				t.Fatalf("status %d, logs %v", r.Status, r.Logs)
			}
			cert, ok := e.readBlob(t, "signed", f.sess.TenantID+"/"+f.sess.GroupID+"/certificate.pdf")
			if !ok {
				t.Fatal("certificate.pdf missing")
			}
			text := pdftotext(t, cert)
			if !strings.Contains(text, "\nTitle: "+tc.want+"\n") {
				t.Errorf("the certificate's title is not %q:\n%s", tc.want, text)
			}
			if strings.Contains(text, "purchase_agreement") {
				t.Errorf("the certificate's title carries the docType:\n%s", text)
			}
		})
	}
}
