package portalapi

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/pii"
)

// recorder is a notify.Sender that keeps what it was given, or fails when told to.
type recorder struct {
	mu   sync.Mutex
	sent []notify.Message
	fail bool
}

func (r *recorder) Send(_ context.Context, m notify.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := m.Validate(); err != nil {
		return err
	}
	if r.fail {
		return apperr.New(apperr.KindUnavailable, "provider_down", "the provider is down")
	}
	r.sent = append(r.sent, m)
	return nil
}

func (r *recorder) last(t *testing.T) notify.Message {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.sent) == 0 {
		t.Fatal("nothing was sent")
	}
	return r.sent[len(r.sent)-1]
}

func (r *recorder) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.sent) }

func (r *recorder) setFail(f bool) { r.mu.Lock(); r.fail = f; r.mu.Unlock() }

var codeInText = regexp.MustCompile(`\bis (\d{6})\.`)

// codeOf extracts the 6-digit code from a sent message.
func codeOf(t *testing.T, m notify.Message) string {
	t.Helper()
	g := codeInText.FindStringSubmatch(m.Text)
	if g == nil {
		t.Fatalf("no code in %q", m.Text)
	}
	return g[1]
}

type otpEnv struct {
	*env
	ch    *Challenge
	email *recorder
	sms   *recorder
}

const (
	testEmail = "jane.doe@example.test"
	testPhone = "+33612345678"
)

// newOTPEnv is newEnv with the OTP and transfer routes added.
func newOTPEnv(t *testing.T) *otpEnv {
	t.Helper()
	e := newEnv(t)
	e.api.Sessions.Cipher = e.Cipher
	o := &otpEnv{env: e, email: &recorder{}, sms: &recorder{}}
	o.ch = &Challenge{API: e.api, Senders: notify.Providers{Email: o.email, SMS: o.sms}, Hasher: e.Hasher,
		PortalURL: testOrigin + "/"}
	mux := http.NewServeMux()
	e.api.Routes(mux)
	o.ch.Routes(mux)
	e.handler = funcproto.NewRouter(mux)
	return o
}

// otpSession makes a one-slot session whose signer has channel ch, an encrypted address and
// (withPhone) phone number, activates it and returns the fixture and the access token.
func (o *otpEnv) otpSession(t *testing.T, ch esign.OTPChannel, withPhone bool) (*fixture, string) {
	t.Helper()
	f := o.newSession(t, sessionOpts{})
	gid := f.s.GroupID
	emailEnc, err := o.ch.Sessions.Cipher.EncryptString(testEmail, pii.AAD(gid, "slot", strconv.Itoa(0)))
	if err != nil {
		t.Fatal(err)
	}
	phoneEnc := ""
	if withPhone {
		if phoneEnc, err = o.ch.Sessions.Cipher.EncryptString(testPhone, pii.AAD(gid, "phone", strconv.Itoa(0))); err != nil {
			t.Fatal(err)
		}
	}
	o.update(t, gid, func(s *esign.Session, slots []esign.Slot) esign.Change {
		slots[0].OTPChannel, slots[0].EmailEnc, slots[0].PhoneEnc = ch, emailEnc, phoneEnc
		return esign.Change{Slots: []int{0}}
	})
	return f, o.activate(t, f, 0)
}

func (o *otpEnv) send(t *testing.T, tok, body string) reply {
	t.Helper()
	return o.do(t, http.MethodPost, PathOTPSend, tok, body)
}

func (o *otpEnv) verify(t *testing.T, tok, code string) reply {
	t.Helper()
	return o.do(t, http.MethodPost, PathOTPVerify, tok, `{"code":"`+code+`"}`)
}

// wrongCode is a 6-digit code other than code.
func wrongCode(code string) string {
	if code == "000000" {
		return "000001"
	}
	return "000000"
}
