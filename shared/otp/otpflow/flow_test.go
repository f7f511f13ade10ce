package otpflow

import (
	"context"
	"errors"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/pii"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// sender records what it is given; fail, when set, is its answer instead; block makes it wait
// for its context to end.
type sender struct {
	mu    sync.Mutex
	sent  []notify.Message
	fail  error
	block bool
	// bounded records whether every send's context had a deadline (the flow's time-out).
	bounded, called bool
}

func (s *sender) Send(ctx context.Context, m notify.Message) error {
	if err := m.Validate(); err != nil {
		return err
	}
	_, ok := ctx.Deadline()
	s.mu.Lock()
	s.bounded, s.called = ok && (!s.called || s.bounded), true
	s.mu.Unlock()
	if s.block {
		<-ctx.Done()
		return ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.sent = append(s.sent, m)
	return nil
}

var sendFailed = &apperr.Error{Kind: apperr.KindUnavailable, Code: "otp_send_failed", Detail: "the code could not be sent"}

func newFlow(t *testing.T, email, sms notify.Sender) *Flow {
	t.Helper()
	h, err := pii.NewHasher([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return &Flow{Hasher: h, Senders: notify.Providers{Email: email, SMS: sms}, Purpose: Signing,
		SendFailed: sendFailed, Field: CodeField{Path: "code", Hint: "the code is 6 digits"}}
}

// owner is an aggregate with one OTP record, as a store update would hold it.
type owner struct {
	st     otp.State
	undone []string // the reasons of the undos
	codes  []Code
}

func (o *owner) record(ch notify.Channel) func(Code) (Target, error) {
	return func(c Code) (Target, error) {
		if err := o.st.CheckSend(t0, 0, 0); err != nil {
			return Target{}, err
		}
		o.codes = append(o.codes, c)
		o.st.Record(t0, string(ch), "j***@e***.test", c.Hash("group", "0"))
		return Target{Channel: ch, To: "jane@example.test", DocumentName: "Contract <A>.pdf", CorrelationID: "corr"}, nil
	}
}

func (o *owner) undo(err error) func(context.Context, string) error {
	return func(ctx context.Context, reason string) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		o.undone = append(o.undone, reason)
		if err != nil {
			return err
		}
		o.st.UndoSend()
		return nil
	}
}

func (o *owner) verify(c Code) (otp.Outcome, *otp.State, error) {
	out, err := o.st.Verify(t0.Add(time.Minute), 0, 0, c.Matches("group", "0"))
	return out, &o.st, err
}

var codeInText = regexp.MustCompile(`\bis (\d{6})\.`)

func TestSendAndVerify(t *testing.T) {
	t.Parallel()
	email, sms := &sender{}, &sender{}
	for _, ch := range []notify.Channel{notify.Email, notify.SMS} {
		f := newFlow(t, email, sms)
		var o owner
		if err := f.Send(context.Background(), o.record(ch), o.undo(nil)); err != nil {
			t.Fatalf("%s: %v", ch, err)
		}
		got := email
		if ch == notify.SMS {
			got = sms
		}
		if len(got.sent) != 1 || len(o.undone) != 0 {
			t.Fatalf("%s: sent %d, undone %v", ch, len(got.sent), o.undone)
		}
		m := got.sent[0]
		g := codeInText.FindStringSubmatch(m.Text)
		if g == nil || m.Channel != ch || m.To != "jane@example.test" || m.CorrelationID != "corr" || m.Kind != notify.KindOTP {
			t.Fatalf("%s: message %+v", ch, m)
		}
		code := g[1]
		if o.st.CodeHash != f.Hasher.Hash("otp", "group|0|"+code) {
			t.Fatalf("%s: the stored hash is not the code's bound to its owner", ch)
		}
		if o.codes[0].Matches("group", "1")(o.st.CodeHash) || !o.codes[0].Matches("group", "0")(o.st.CodeHash) {
			t.Fatalf("%s: a code matches only for its owner", ch)
		}
		wrong := "000000"
		if code == wrong {
			wrong = "000001"
		}
		err := f.Verify(wrong, o.verify)
		if e, _ := apperr.As(err); e == nil || e.Code != "otp_invalid" || e.Extra["attemptsLeft"] != otp.MaxAttempts-1 {
			t.Fatalf("%s: wrong code: %v", ch, err)
		}
		if err := f.Verify(code, o.verify); err != nil || !o.st.Verified(0) {
			t.Fatalf("%s: right code: %v", ch, err)
		}
		if err := f.Verify(code, o.verify); err != otp.ErrAlreadyVerified {
			t.Fatalf("%s: again: %v", ch, err)
		}
	}
}

func TestSendFailures(t *testing.T) {
	t.Parallel()
	provider := apperr.New(apperr.KindUnavailable, "provider_down", "the provider is down")
	undoErr := errors.New("table storage unavailable")
	for _, c := range []struct {
		name       string
		email      *sender
		channel    notify.Channel
		undoErr    error
		reason     string
		cause      error
		codeStays  bool
		withCancel bool // the request's context ends with the send
	}{
		{name: "provider error", email: &sender{fail: provider}, channel: notify.Email, reason: "provider_down", cause: provider},
		{name: "plain error", email: &sender{fail: errors.New("boom")}, channel: notify.Email, reason: "send_failed"},
		{name: "no sender for the channel", email: &sender{}, channel: notify.SMS, reason: "otp_channel_unconfigured"},
		{name: "time-out", email: &sender{block: true}, channel: notify.Email, reason: "otp_send_timeout", cause: context.DeadlineExceeded},
		{name: "request cancelled", email: &sender{block: true}, channel: notify.Email, reason: "send_failed", cause: context.Canceled, withCancel: true},
		{name: "undo fails too", email: &sender{fail: provider}, channel: notify.Email, undoErr: undoErr, reason: "provider_down", cause: undoErr, codeStays: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFlow(t, c.email, nil)
			f.Timeout = 50 * time.Millisecond
			ctx := context.Background()
			if c.withCancel {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(10*time.Millisecond, cancel)
			}
			var o owner
			err := f.Send(ctx, o.record(c.channel), o.undo(c.undoErr))
			if c.email.called && !c.email.bounded {
				t.Fatal("the provider's send had no deadline: it was not bounded by the flow's time-out")
			}
			e, _ := apperr.As(err)
			if e == nil || e.Kind != apperr.KindUnavailable || e.Code != "otp_send_failed" || e.Detail != sendFailed.Detail {
				t.Fatalf("answer %v", err)
			}
			if sendFailed.Err != nil {
				t.Fatal("Send changed the route's shared error value")
			}
			if c.cause != nil && !errors.Is(err, c.cause) {
				t.Fatalf("the cause %v is not in %v", c.cause, err)
			}
			if c.undoErr != nil && !errors.Is(err, provider) {
				t.Fatalf("the provider's error is lost when the undo fails: %v", err)
			}
			if len(o.undone) != 1 || o.undone[0] != c.reason {
				t.Fatalf("undone %v, want [%s]", o.undone, c.reason)
			}
			if (o.st.CodeHash != "") != c.codeStays || o.st.SentAt.IsZero() == c.codeStays {
				t.Fatalf("the record after the failed send: %+v", o.st)
			}
			if len(c.email.sent) != 0 {
				t.Fatal("a failed send was recorded as sent")
			}
		})
	}
}

func TestSendRecordFails(t *testing.T) {
	t.Parallel()
	email := &sender{}
	f := newFlow(t, email, nil)
	o := owner{st: otp.State{Blocked: true, BlockedAt: t0}}
	if err := f.Send(context.Background(), o.record(notify.Email), o.undo(nil)); !errors.Is(err, &apperr.Error{Kind: apperr.KindInvalid, Code: otp.CodeBlocked}) {
		t.Fatalf("blocked: %v", err)
	}
	if len(email.sent) != 0 || len(o.undone) != 0 {
		t.Fatalf("sent %d, undone %v after a refused record", len(email.sent), o.undone)
	}
}

func TestVerifyBadCode(t *testing.T) {
	t.Parallel()
	f := newFlow(t, &sender{}, nil)
	f.Field = CodeField{Path: "otp", Hint: "the 6-digit code from the e-mail"}
	for _, code := range []string{"", "12345", "1234567", "12a456", " 12345", "١٢٣٤٥٦", "12345\n"} {
		ran := false
		err := f.Verify(code, func(Code) (otp.Outcome, *otp.State, error) { ran = true; return otp.Passed, &otp.State{}, nil })
		e, _ := apperr.As(err)
		if e == nil || e.Kind != apperr.KindInvalid || e.Code != "invalid_request" || len(e.Fields) != 1 ||
			e.Fields[0] != apperr.Field("otp", "the 6-digit code from the e-mail") || ran {
			t.Errorf("%q: %v (verify ran: %v)", code, err, ran)
		}
	}
	if err := f.CheckCode("012345"); err != nil {
		t.Fatalf("a good code: %v", err)
	}
}

func TestVerifyOutcomes(t *testing.T) {
	t.Parallel()
	f := newFlow(t, &sender{}, nil)
	refused := errors.New("session gone")
	for _, c := range []struct {
		out  otp.Outcome
		err  error
		code string
	}{
		{otp.Passed, nil, ""},
		{otp.Expired, nil, "otp_expired"},
		{otp.Locked, nil, "otp_locked"},
		{otp.LockedNow, nil, "otp_locked"},
		{otp.BlockedNow, nil, "otp_blocked"},
		{otp.Passed, refused, ""},
	} {
		err := f.Verify("123456", func(Code) (otp.Outcome, *otp.State, error) { return c.out, &otp.State{}, c.err })
		switch {
		case c.err != nil:
			if err != c.err {
				t.Errorf("%v: %v, want the transition's error", c.out, err)
			}
		case c.code == "":
			if err != nil {
				t.Errorf("%v: %v", c.out, err)
			}
		default:
			if e, _ := apperr.As(err); e == nil || e.Code != c.code {
				t.Errorf("%v: %v, want %s", c.out, err, c.code)
			}
		}
	}
}

// TestVerifyBlockTime: the flow's Block (the app's OTP_BLOCK_MINUTES) is the end the answer to
// a blocking try names, in blockedUntil and Retry-After; without one it is otp.DefaultBlock.
func TestVerifyBlockTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct{ block, want time.Duration }{{0, otp.DefaultBlock}, {5 * time.Minute, 5 * time.Minute}} {
		f := newFlow(t, &sender{}, nil)
		f.Block = c.block
		err := f.Verify("123456", func(Code) (otp.Outcome, *otp.State, error) {
			return otp.BlockedNow, &otp.State{Blocked: true, BlockedAt: at}, nil
		})
		e, _ := apperr.As(err)
		if e == nil || e.Code != "otp_blocked" || e.RetryAfter != c.want ||
			e.Extra["blockedUntil"] != at.Add(c.want).Format(time.RFC3339) {
			t.Errorf("block %s: %+v, want otp_blocked until %s", c.block, e, at.Add(c.want))
		}
	}
}
