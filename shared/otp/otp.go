// Package otp is the one-time-passcode record shared by signer slots and delivery sessions:
// 6 digits from crypto/rand, stored only as a keyed hash, a 10-minute life from sending, one
// send per 60 seconds, a code locked after 5 wrong tries, and after 3 locked codes the record
// is blocked for a while (the caller's block time; 0 is DefaultBlock) or until the requester
// sends the owner's invitation again (never by the owner's own link). The functions here change a State;
// the caller persists it with its audit events.
package otp

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// Limits (spec "Limits": 6 digits, 10-minute TTL from send, locked after 5 failures, one send
// per 60 seconds).
const (
	Digits       = 6
	TTL          = 10 * time.Minute
	SendInterval = 60 * time.Second
	MaxAttempts  = 5
	MaxLocks     = 3
	// DefaultBlock is how long a block lasts when the caller gives no block time (the
	// dispatcher's OTP_BLOCK_MINUTES default).
	DefaultBlock = 60 * time.Minute
)

// Problem codes of the OTP challenge that signers and recipients share.
const (
	CodeRequired    = "otp_required"     // 403: the challenge must be passed first
	CodeNotRequired = "otp_not_required" // 400: this signer or delivery uses no OTP
	CodeSendFailed  = "otp_send_failed"  // 503: the code could not be sent
)

// State is one OTP record. The code itself is never kept: only its keyed hash, and only until
// it is used, locked or replaced.
type State struct {
	Channel     string // channel of the current code (email or sms)
	Destination string // masked destination of the current code, for evidence
	CodeHash    string
	SentAt      time.Time
	ExpiresAt   time.Time
	Attempts    int // wrong tries on the current code
	Locks       int // codes locked since the last reset
	Blocked     bool
	BlockedAt   time.Time // when the record was blocked; the block lifts blockFor after it
	VerifiedAt  time.Time
	VerifiedGen int // the device generation the verification is for (0 where there is none)
}

// Verified reports whether generation gen has passed.
func (s *State) Verified(gen int) bool { return !s.VerifiedAt.IsZero() && s.VerifiedGen == gen }

// NewCode is a uniformly random 6-digit code.
func NewCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

// CodeBlocked is the 400 of a send or verify while the record is blocked (spec: a verify after
// max attempts is 400 with details).
const CodeBlocked = "otp_blocked"

// ErrBlocked is the answer while blocked until: 400 otp_blocked with blockedUntil (RFC 3339)
// and Retry-After.
func ErrBlocked(now, until time.Time) *apperr.Error {
	return &apperr.Error{Kind: apperr.KindInvalid, Code: CodeBlocked,
		Detail:     "too many wrong codes: try again later, or ask the sender of the document to send the invitation again",
		RetryAfter: until.Sub(now), Extra: map[string]any{"blockedUntil": until.UTC().Format(time.RFC3339)}}
}

// blocked lifts a block that has run blockFor (0: DefaultBlock) at now, and answers the
// ErrBlocked of one that has not.
func (s *State) blocked(now time.Time, blockFor time.Duration) error {
	if !s.Blocked {
		return nil
	}
	if blockFor <= 0 {
		blockFor = DefaultBlock
	}
	until := s.BlockedAt.Add(blockFor)
	if !now.Before(until) {
		s.Reset()
		return nil
	}
	return ErrBlocked(now, until)
}

// ErrAlreadyVerified is the 400 of a send or verify after success.
var ErrAlreadyVerified = &apperr.Error{Kind: apperr.KindInvalid, Code: "otp_already_verified", Detail: "the OTP challenge was already passed"}

// CheckSend says whether a new code may be sent at now for generation gen: 400 when already
// verified, 400 otp_blocked within blockFor (0: DefaultBlock) of a block (a block past it is
// lifted here: persist the state), 429 with Retry-After within 60 seconds of the last send.
func (s *State) CheckSend(now time.Time, gen int, blockFor time.Duration) error {
	if s.Verified(gen) {
		return ErrAlreadyVerified
	}
	if err := s.blocked(now, blockFor); err != nil {
		return err
	}
	switch {
	case !s.SentAt.IsZero() && now.Sub(s.SentAt) < SendInterval:
		return &apperr.Error{Kind: apperr.KindRateLimited, Code: "otp_rate_limited",
			Detail: "one code per 60 seconds; try again later", RetryAfter: SendInterval - now.Sub(s.SentAt)}
	}
	return nil
}

// Record stores a new code's hash, replacing any earlier code. Call CheckSend first.
func (s *State) Record(now time.Time, channel, maskedDest, codeHash string) {
	s.Channel, s.Destination, s.CodeHash = channel, maskedDest, codeHash
	s.SentAt, s.ExpiresAt, s.Attempts = now, now.Add(TTL), 0
}

// UndoSend forgets a code whose delivery failed, so that a new one may be asked for at once.
func (s *State) UndoSend() { s.CodeHash, s.SentAt, s.ExpiresAt = "", time.Time{}, time.Time{} }

// Reset lifts a block and drops the current code: the requester sent the owner's invitation
// again, or the block ran its time. Never call it for the owner's own link.
func (s *State) Reset() {
	s.Blocked, s.BlockedAt, s.Locks, s.Attempts, s.CodeHash = false, time.Time{}, 0, 0, ""
}

// Outcome is what a verification attempt came to.
type Outcome int

const (
	Passed     Outcome = iota
	Wrong              // wrong code; attempts left
	LockedNow          // wrong code and this code is now locked
	BlockedNow         // wrong code, code locked, and the record is now blocked
	Expired            // no live code
	Locked             // the code was already locked
)

func (o Outcome) String() string {
	return [...]string{"passed", "wrong_code", "locked_now", "blocked_now", "expired", "locked"}[o]
}

// Err is the 4xx a failed outcome is answered with (nil for Passed); blockFor (0:
// DefaultBlock) is the block time the record was verified with.
func (o Outcome) Err(s *State, blockFor time.Duration) error {
	if blockFor <= 0 {
		blockFor = DefaultBlock
	}
	switch o {
	case Wrong:
		return &apperr.Error{Kind: apperr.KindInvalid, Code: "otp_invalid", Detail: "the code is not right",
			Extra: map[string]any{"attemptsLeft": MaxAttempts - s.Attempts}}
	case LockedNow, Locked:
		return apperr.New(apperr.KindInvalid, "otp_locked", "too many wrong tries: this code is locked; ask for a new one")
	case BlockedNow:
		return ErrBlocked(s.BlockedAt, s.BlockedAt.Add(blockFor))
	case Expired:
		return apperr.New(apperr.KindInvalid, "otp_expired", "no valid code: the code expired or none was sent; ask for a new one")
	}
	return nil
}

// Verify checks a code for generation gen: matches says whether the submitted code's keyed hash
// equals the stored one (compare in constant time). It errs (nothing to persist) when the record
// is already verified or blocked (within blockFor, 0: DefaultBlock, of the block; a block past
// it is lifted); otherwise every outcome changes the state and must be persisted: attempt
// counts, locks and blocks must survive.
func (s *State) Verify(now time.Time, gen int, blockFor time.Duration, matches func(storedHash string) bool) (Outcome, error) {
	if s.Verified(gen) {
		return 0, ErrAlreadyVerified
	}
	if err := s.blocked(now, blockFor); err != nil {
		return 0, err
	}
	switch {
	case s.CodeHash == "" && s.Attempts >= MaxAttempts:
		return Locked, nil
	case s.CodeHash == "" || !now.Before(s.ExpiresAt):
		return Expired, nil
	}
	if matches(s.CodeHash) {
		s.CodeHash, s.VerifiedAt, s.VerifiedGen = "", now, gen
		return Passed, nil
	}
	s.Attempts++
	if s.Attempts < MaxAttempts {
		return Wrong, nil
	}
	s.Locks++
	s.CodeHash = ""
	if s.Locks < MaxLocks {
		return LockedNow, nil
	}
	s.Blocked, s.BlockedAt = true, now
	return BlockedNow, nil
}
