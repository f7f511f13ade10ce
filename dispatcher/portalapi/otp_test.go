package portalapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/otp"
)

func TestOTPEachChannel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		channel esign.OTPChannel
		body    string
		via     notify.Channel
		to      string
		masked  string
	}{
		{"email", esign.OTPEmail, "", notify.Email, testEmail, "j***@e***.test"},
		{"sms", esign.OTPSMS, "", notify.SMS, testPhone, "+33******78"},
		{"choice-email", esign.OTPSignerChoice, `{"channel":"email"}`, notify.Email, testEmail, "j***@e***.test"},
		{"choice-sms", esign.OTPSignerChoice, `{"channel":"sms"}`, notify.SMS, testPhone, "+33******78"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := newOTPEnv(t)
			f, tok := o.otpSession(t, c.channel, true)
			o.do(t, http.MethodGet, PathDocument+tok, "", "").want(t, http.StatusForbidden, "otp_required")
			o.do(t, http.MethodPost, PathViewed, tok, "").want(t, http.StatusForbidden, "otp_required")

			r := o.send(t, tok, c.body)
			r.want(t, http.StatusOK, "")
			v := r.json(t)
			now := o.clock.Now()
			if v["channel"] != string(c.via) || v["destination"] != c.masked || v["ok"] != true ||
				v["expiresAt"] != now.Add(otp.TTL).Format(time.RFC3339Nano) ||
				v["resendAfter"] != now.Add(otp.SendInterval).Format(time.RFC3339Nano) || v["accessToken"] == "" {
				t.Fatalf("send answer %v", v)
			}
			rec := o.email
			if c.via == notify.SMS {
				rec = o.sms
			}
			m := rec.last(t)
			if m.To != c.to || m.Channel != c.via || m.Kind != notify.KindOTP || !strings.Contains(m.Text, "10 minutes") ||
				!strings.Contains(m.Text, f.s.DocumentID) {
				t.Fatalf("message %+v", m)
			}
			code := codeOf(t, m)
			_, slots := o.load(t, f.s.GroupID)
			if slots[0].OTP.CodeHash == "" || strings.Contains(slots[0].OTP.CodeHash, code) || slots[0].OTP.Destination != c.masked {
				t.Fatalf("stored OTP %+v", slots[0].OTP)
			}

			r = o.verify(t, tok, wrongCode(code))
			r.want(t, http.StatusBadRequest, "otp_invalid")
			if r.json(t)["attemptsLeft"] != float64(otp.MaxAttempts-1) {
				t.Fatalf("attemptsLeft: %s", r.body)
			}
			r = o.verify(t, tok, code)
			r.want(t, http.StatusOK, "")
			if v := r.json(t); v["verified"] != true || v["slotState"] != string(esign.SlotOTPVerified) {
				t.Fatalf("verify answer %v", v)
			}
			o.do(t, http.MethodGet, PathDocument+tok, "", "").want(t, http.StatusOK, "")
			o.verify(t, tok, code).want(t, http.StatusBadRequest, "otp_already_verified")
			o.send(t, tok, c.body).want(t, http.StatusBadRequest, "otp_already_verified")
			assertEvents(t, o.env, f.s.GroupID, esign.EvSlotOTPSent, esign.EvSlotOTPFailed, esign.EvSlotOTPVerified)
		})
	}
}

func TestOTPRateLimitAndExpiry(t *testing.T) {
	t.Parallel()
	o := newOTPEnv(t)
	_, tok := o.otpSession(t, esign.OTPEmail, false)
	o.send(t, tok, "").want(t, http.StatusOK, "")
	first := codeOf(t, o.email.last(t))
	o.clock.Add(59 * time.Second)
	r := o.send(t, tok, "")
	r.want(t, http.StatusTooManyRequests, "otp_rate_limited")
	if r.header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	if o.email.count() != 1 {
		t.Fatal("a rate-limited send sent a code")
	}
	o.clock.Add(otp.TTL - 59*time.Second) // exactly 10 minutes after the send
	o.verify(t, tok, first).want(t, http.StatusBadRequest, "otp_expired")
	o.send(t, tok, "").want(t, http.StatusOK, "")
	second := codeOf(t, o.email.last(t))
	if second != first {
		o.verify(t, tok, first).want(t, http.StatusBadRequest, "otp_invalid") // replaced
	}
	o.verify(t, tok, second).want(t, http.StatusOK, "")
}

// TestOTPLockAndBlock: three locked codes block the slot's OTP with 400 otp_blocked (the spec's
// verify after max attempts) until the block time (OTP_BLOCK_MINUTES, its default here) has run; then the
// signer may ask a new code. (It used to pin a permanent 403 otp_blocked.)
func TestOTPLockAndBlock(t *testing.T) {
	t.Parallel()
	o := newOTPEnv(t)
	f, tok := o.otpSession(t, esign.OTPEmail, false)
	var blockedAt time.Time
	for lock := 1; lock <= otp.MaxLocks; lock++ {
		o.send(t, tok, "").want(t, http.StatusOK, "")
		code := codeOf(t, o.email.last(t))
		for try := 1; try < otp.MaxAttempts; try++ {
			o.verify(t, tok, wrongCode(code)).want(t, http.StatusBadRequest, "otp_invalid")
		}
		if lock < otp.MaxLocks {
			o.verify(t, tok, wrongCode(code)).want(t, http.StatusBadRequest, "otp_locked")
			o.verify(t, tok, code).want(t, http.StatusBadRequest, "otp_locked") // the right code no longer works
		} else {
			blockedAt = o.clock.Now()
			o.verify(t, tok, wrongCode(code)).want(t, http.StatusBadRequest, "otp_blocked")
		}
		o.clock.Add(otp.SendInterval)
	}
	o.send(t, tok, "").want(t, http.StatusBadRequest, "otp_blocked")
	o.verify(t, tok, "123456").want(t, http.StatusBadRequest, "otp_blocked")
	o.do(t, http.MethodGet, PathDocument+tok, "", "").want(t, http.StatusForbidden, "otp_required")
	_, slots := o.load(t, f.s.GroupID)
	if !slots[0].OTP.Blocked || slots[0].OTP.Locks != otp.MaxLocks || !slots[0].OTP.BlockedAt.Equal(blockedAt) {
		t.Fatalf("stored OTP %+v", slots[0].OTP)
	}
	assertEvents(t, o.env, f.s.GroupID, esign.EvSlotOTPLocked, esign.EvSlotOTPBlocked)
	// The access token lives less than a block, so the block is moved back in the store rather
	// than the clock forward: one second before it has run, then when it has.
	blockFrom := func(at time.Time) {
		o.update(t, f.s.GroupID, func(_ *esign.Session, slots []esign.Slot) esign.Change {
			slots[0].OTP.BlockedAt = at
			return esign.Change{Slots: []int{0}}
		})
	}
	blockFrom(o.clock.Now().Add(-otp.DefaultBlock + time.Second))
	o.send(t, tok, "").want(t, http.StatusBadRequest, "otp_blocked")
	blockFrom(o.clock.Now().Add(-otp.DefaultBlock))
	o.send(t, tok, "").want(t, http.StatusOK, "")
	o.verify(t, tok, codeOf(t, o.email.last(t))).want(t, http.StatusOK, "")
}

func TestOTPSendFailureIsUndone(t *testing.T) {
	t.Parallel()
	o := newOTPEnv(t)
	f, tok := o.otpSession(t, esign.OTPEmail, false)
	o.email.setFail(true)
	o.send(t, tok, "").want(t, http.StatusServiceUnavailable, "otp_send_failed")
	_, slots := o.load(t, f.s.GroupID)
	if slots[0].OTP.CodeHash != "" || !slots[0].OTP.SentAt.IsZero() {
		t.Fatalf("a failed send left a code: %+v", slots[0].OTP)
	}
	o.email.setFail(false)
	o.send(t, tok, "").want(t, http.StatusOK, "") // at once: no 429
	o.verify(t, tok, codeOf(t, o.email.last(t))).want(t, http.StatusOK, "")
	assertEvents(t, o.env, f.s.GroupID, esign.EvSlotOTPSendFailed)
}

func TestOTPBadRequests(t *testing.T) {
	t.Parallel()
	o := newOTPEnv(t)
	_, tok := o.otpSession(t, esign.OTPSignerChoice, false)
	_, plain := o.otpSession(t, esign.OTPNone, false)
	for _, c := range []struct {
		name, path, tok, body string
		status                int
		code                  string
	}{
		{"code short", PathOTPVerify, tok, `{"code":"12345"}`, 400, "invalid_request"},
		{"code letters", PathOTPVerify, tok, `{"code":"12a456"}`, 400, "invalid_request"},
		{"code missing", PathOTPVerify, tok, `{}`, 400, "invalid_request"},
		{"channel unknown", PathOTPSend, tok, `{"channel":"fax"}`, 400, "invalid_request"},
		{"choice without pick", PathOTPSend, tok, ``, 400, "invalid_request"},
		{"sms without phone", PathOTPSend, tok, `{"channel":"sms"}`, 400, "invalid_request"},
		{"no bearer", PathOTPSend, "", `{"channel":"email"}`, 401, "token_missing"},
		{"bad bearer", PathOTPVerify, "x.y.z", `{"code":"123456"}`, 401, "token_invalid"},
		{"slot without OTP", PathOTPSend, plain, ``, 400, "otp_not_required"},
	} {
		r := o.do(t, http.MethodPost, c.path, c.tok, c.body)
		if r.status != c.status || r.code(t) != c.code {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
		if c.status == 400 && c.code == "invalid_request" && !strings.Contains(string(r.body), `"field"`) {
			t.Errorf("%s: no field named: %s", c.name, r.body)
		}
	}
}

// assertEvents fails unless the session's audit trail has every kind.
func assertEvents(t *testing.T, e *env, groupID string, kinds ...string) {
	t.Helper()
	evs, err := e.store.Events(context.Background(), groupID)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ev := range evs {
		seen[ev.Kind] = true
	}
	for _, k := range kinds {
		if !seen[k] {
			t.Errorf("audit trail lacks %s", k)
		}
	}
}

// With OTP as without it, consent follows the viewing of the document (spec 000 evidence
// timeline pending, activated, viewed, signed): a signer who passed OTP and consents before
// reporting viewed is 409 not_viewed, and nothing is recorded.
func TestOTPConsentWaitsForViewed(t *testing.T) {
	t.Parallel()
	o := newOTPEnv(t)
	f, tok := o.otpSession(t, esign.OTPEmail, true)
	o.send(t, tok, "").want(t, http.StatusOK, "")
	o.verify(t, tok, codeOf(t, o.email.last(t))).want(t, http.StatusOK, "")
	body := `{"statements":["document_reviewed","electronic_signature","legally_binding"],"version":"` + esign.ConsentVersion + `"}`
	o.do(t, http.MethodPost, PathConsent, tok, body).want(t, http.StatusConflict, "not_viewed")
	if _, slots := o.load(t, f.s.GroupID); len(slots[0].Consents) != 0 || slots[0].State != esign.SlotOTPVerified {
		t.Fatalf("a refused consent changed the slot: %s %+v", slots[0].State, slots[0].Consents)
	}
	o.do(t, http.MethodPost, PathViewed, tok, "").want(t, http.StatusOK, "")
	o.do(t, http.MethodPost, PathConsent, tok, body).want(t, http.StatusOK, "")
	_, slots := o.load(t, f.s.GroupID)
	if _, ok := slots[0].Timeline[esign.SlotViewed]; !ok || len(slots[0].Consents) != 3 {
		t.Fatalf("after viewed: timeline %v consents %+v", slots[0].Timeline, slots[0].Consents)
	}
}
