// Package otpflow is the one send-and-verify flow of one-time codes over shared/otp's record,
// for every aggregate that challenges its people with a code (signer slots, delivery
// recipients, workflow participants). The aggregate supplies its transitions, run inside its
// store's update; the flow makes the code, binds its hash to the owner, sends the message with
// a bounded time-out, records a failed send, checks a submitted code's form and turns a
// verification's outcome into the answer. It imports no HTTP: a route decodes its body with
// MaxBody and returns the errors here as they are.
package otpflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/pii"
)

// SendTimeout bounds a provider's send of a code, and the recording of a failed send after it.
const SendTimeout = 20 * time.Second

// MaxBody is the size limit of a verify request's JSON body: one short field.
const MaxBody = 4 << 10

// ErrSendFailed is the usual Flow.SendFailed: the 503 when the provider did not take the code
// (nothing is kept: the person may ask again at once).
var ErrSendFailed = &apperr.Error{Kind: apperr.KindUnavailable, Code: otp.CodeSendFailed, Detail: "the code could not be sent; try again"}

// Flow is the code flow of one kind of owner (its routes' answers and message wording).
type Flow struct {
	Hasher  *pii.Hasher      // keyed hash of the codes (PII_HASH_KEY)
	Senders notify.Providers // a nil channel's sender is a failed send
	Purpose Purpose          // the message's wording
	// SendFailed is the 503 otp_send_failed of the owner's routes: returned, with the cause
	// attached, whenever the provider did not take the code.
	SendFailed *apperr.Error
	Field      CodeField     // the verify request's field
	Timeout    time.Duration // 0: SendTimeout
	Block      time.Duration // how long three locked codes block the owner (0: otp.DefaultBlock); the same the owner's transitions are given
}

// CodeField is the request field a submitted code comes in: its JSON path and what the 400 of
// a code that is not 6 digits says about it.
type CodeField struct{ Path, Hint string }

// Code is a code as an aggregate's transitions see it: never its digits, only their keyed hash
// bound to the code's owner (the aggregate's ids, e.g. a session and a slot), so that a hash is
// worth nothing for any other owner.
type Code struct {
	digits string
	hasher *pii.Hasher
}

// Hash is the value to store for owner: HMAC("otp", owner[0]|owner[1]|...|digits).
func (c Code) Hash(owner ...string) string { return c.hasher.Hash("otp", bind(owner, c.digits)) }

// Matches is the check a verify transition is given for owner: whether a stored hash is this
// code's (compared in constant time).
func (c Code) Matches(owner ...string) func(storedHash string) bool {
	value := bind(owner, c.digits)
	return func(stored string) bool { return c.hasher.Matches("otp", value, stored) }
}

func bind(owner []string, digits string) string {
	return strings.Join(append(append([]string(nil), owner...), digits), "|")
}

// Target is where a recorded code goes, as the record step found it.
type Target struct {
	Channel       notify.Channel
	To            string // the address or phone number: personal data, never logged
	DocumentName  string // what the message names; "" for "your document"
	CorrelationID string
	Locale        string // the language of the message (shared/i18n); "": English
}

// Send makes a code and records it through record: the aggregate's send transition inside its
// store update, which stores only code.Hash and returns where the code goes. Then the message
// goes to the channel's provider within the time-out. When the provider fails (an error, a
// time-out or no sender for the channel), undo records the failed send (the aggregate's undo
// transition, given FailureReason of the provider's error) on a context that outlives the
// request's cancellation, bounded by the same time-out, and Send returns SendFailed with the
// provider's error as its cause. When the undo fails too, the code stays recorded (unsent, so
// nobody can use it; it lapses with its TTL and a new send waits out the 60 s), the answer is
// still SendFailed and its cause joins both errors: the edge logs it once, as every 5xx.
// Errors besides SendFailed: record's own (nothing was sent); 500 when no code could be made.
func (f *Flow) Send(ctx context.Context, record func(code Code) (Target, error), undo func(ctx context.Context, reason string) error) error {
	digits, err := otp.NewCode()
	if err != nil {
		return apperr.Wrap(err, apperr.KindInternal, "otp_code_failed", "could not make a code")
	}
	to, err := record(Code{digits: digits, hasher: f.Hasher})
	if err != nil {
		return err
	}
	sendErr := f.deliver(ctx, Message(to, f.Purpose, digits))
	if sendErr == nil {
		return nil
	}
	undoCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.timeout())
	defer cancel()
	cause := sendErr
	if undoErr := undo(undoCtx, FailureReason(sendErr)); undoErr != nil {
		cause = errors.Join(sendErr, fmt.Errorf("otp: the failed send was not recorded, the code stays until it lapses: %w", undoErr))
	}
	failed := *f.SendFailed
	failed.Err = cause
	return &failed
}

// deliver hands m to its channel's provider within the time-out. Nothing here logs the code.
func (f *Flow) deliver(ctx context.Context, m notify.Message) error {
	sender := f.Senders.Email
	if m.Channel == notify.SMS {
		sender = f.Senders.SMS
	}
	if sender == nil {
		return apperr.New(apperr.KindUnavailable, "otp_channel_unconfigured", "no sender is configured for %s", m.Channel)
	}
	sendCtx, cancel := context.WithTimeout(ctx, f.timeout())
	defer cancel()
	err := sender.Send(sendCtx, m)
	if err != nil && sendCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		return apperr.Wrap(err, apperr.KindUnavailable, "otp_send_timeout", "the provider did not answer within %s", f.timeout())
	}
	return err
}

func (f *Flow) timeout() time.Duration {
	if f.Timeout > 0 {
		return f.Timeout
	}
	return SendTimeout
}

// FailureReason is what the audit of a failed send may say of the provider's error: its code
// when it has one, else "send_failed" (never its text, which may name the recipient).
func FailureReason(err error) string {
	if e, ok := apperr.As(err); ok && e.Code != "" {
		return e.Code
	}
	return "send_failed"
}

// CheckCode is the 400 invalid_request naming the field when code is not 6 digits.
func (f *Flow) CheckCode(code string) error {
	if len(code) != otp.Digits {
		return apperr.Invalid("invalid_request", apperr.Field(f.Field.Path, f.Field.Hint))
	}
	for i := 0; i < len(code); i++ {
		if code[i] < '0' || code[i] > '9' {
			return apperr.Invalid("invalid_request", apperr.Field(f.Field.Path, f.Field.Hint))
		}
	}
	return nil
}

// Verify checks a submitted code: CheckCode, then verify, the aggregate's verify transition
// inside its store update (which persists every outcome: tries, locks and blocks must survive),
// given the code to match with Code.Matches; it returns the outcome and the record after it.
// Errors: CheckCode's 400 (verify is not run); verify's own (nothing was persisted); the
// outcome's 4xx (otp.Outcome.Err: otp_invalid with attemptsLeft, otp_locked, otp_blocked,
// otp_expired). nil when the code passed.
func (f *Flow) Verify(code string, verify func(code Code) (otp.Outcome, *otp.State, error)) error {
	if err := f.CheckCode(code); err != nil {
		return err
	}
	out, st, err := verify(Code{digits: code, hasher: f.Hasher})
	if err != nil {
		return err
	}
	return out.Err(st, f.Block)
}
