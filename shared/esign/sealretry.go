package esign

import (
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// EvSealRequeued is the audit event of an admin re-queue of a failed or stuck seal.
const EvSealRequeued = "seal.requeued"

// SealStuckAfter is how long a session may sit in sealing with no recorded failure before an
// admin may re-queue it. It equals the processor reconciler's default threshold
// (processor/seal.DefaultStuckAfter), so an admin is never ahead of a seal attempt still
// running within its lock.
const SealStuckAfter = 15 * time.Minute

// ErrSealNotStuck is the 409 for a re-queue of a session that is sealing, has no recorded
// failure and entered sealing less than SealStuckAfter ago: its seal is still on its way.
var ErrSealNotStuck = &apperr.Error{Kind: apperr.KindConflict, Code: "seal_not_stuck",
	Detail: "the session is being sealed: no seal failure is recorded and it is not stuck yet"}

// RequeueSeal lets an admin retry the seal of a session in sealing whose last seal failed
// (SealError set) or that is stuck (sealingSince is at least SealStuckAfter before now, or
// unknown: the zero time). It clears SealError and records seal.requeued with the attempt
// number (previous + 1, previous being the number of earlier seal.requeued events) and, when
// there was one, the failure it retries (FailSeal's reason, which holds no personal data).
// The change has no effects: the caller queues the SealMessage with that Attempt itself.
// Errors: ErrAlreadyComplete, ErrNotSealing (other states), ErrSealNotStuck; all are 409 and
// change nothing.
func RequeueSeal(s *Session, now, sealingSince time.Time, previous int) (Change, int, error) {
	var c Change
	if err := checkSealing(s); err != nil {
		return c, 0, err
	}
	stuck := sealingSince.IsZero() || now.Sub(sealingSince) >= SealStuckAfter
	if s.SealError == "" && !stuck {
		return c, 0, ErrSealNotStuck
	}
	attempt := max(previous, 0) + 1
	data := map[string]any{"attempt": attempt}
	if s.SealError != "" {
		data["previousError"] = s.SealError
	}
	s.SealError = ""
	c.Record(EvSealRequeued, -1, now, data)
	return c, attempt, nil
}
