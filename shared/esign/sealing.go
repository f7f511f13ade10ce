package esign

import (
	"time"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/apperr"
)

// Effects of the sealing transitions. Like EffectSignerNotice, the requester notices are gated
// by the notification job (requestedByEmail set), not here.
const (
	EffectDocumentsReady  EffectKind = "documents_ready"  // requester: the signed documents are ready
	EffectSignerCompleted EffectKind = "signer_completed" // signer Slot: the session completed
	EffectSealFailure     EffectKind = "seal_failure"     // requester: sealing failed
)

// MaxSealErrorLen bounds the reason FailSeal records (in runes).
const MaxSealErrorLen = 200

// Errors of the sealing transitions. ErrAlreadyComplete means the work is done: a seal job that
// gets it treats the message as a duplicate and acknowledges it.
var (
	ErrAlreadyComplete = &apperr.Error{Kind: apperr.KindConflict, Code: "session_already_complete", Detail: "the signing session is already complete"}
	ErrNotSealing      = &apperr.Error{Kind: apperr.KindConflict, Code: "session_not_sealing", Detail: "the signing session is not waiting to be sealed"}
)

// Complete records that the processor sealed the session: sealing -> complete, CompletedAt, the
// three output paths, SealError cleared, the event session.completed with the paths, and the
// effects documents-ready (slot -1) and one signer-completed notice per signed slot.
//
// The brief's signature had no slots; they are needed to know which slots are signed.
// Errors: ErrAlreadyComplete for a complete session (nothing changed), ErrNotSealing for any
// other state.
func Complete(s *Session, slots []Slot, now time.Time, signedPath, certPath, evidencePath string) (Change, error) {
	var c Change
	if err := checkSealing(s); err != nil {
		return c, err
	}
	s.State, s.CompletedAt, s.SealError = SessionComplete, now, ""
	s.SignedPath, s.CertificatePath, s.EvidencePath = signedPath, certPath, evidencePath
	c.Record(EvSessionCompleted, -1, now, map[string]any{
		"signedPath": signedPath, "certificatePath": certPath, "evidencePath": evidencePath,
	})
	c.Effects = append(c.Effects, Effect{Kind: EffectDocumentsReady, Slot: -1})
	for _, sl := range slots {
		if sl.State == SlotSigned {
			c.Effects = append(c.Effects, Effect{Kind: EffectSignerCompleted, Slot: sl.Index})
		}
	}
	return c, nil
}

// FailSeal records a failed seal: the event seal.failed with a short reason (cut to
// MaxSealErrorLen runes; it must hold no personal data), SealError set, and the seal-failure
// notice. The session stays sealing so that an admin re-queue can retry; a later Complete
// clears SealError. Errors: ErrAlreadyComplete, ErrNotSealing.
func FailSeal(s *Session, now time.Time, reason string) (Change, error) {
	var c Change
	if err := checkSealing(s); err != nil {
		return c, err
	}
	if reason == "" {
		reason = "sealing failed"
	}
	reason = cutRunes(reason, MaxSealErrorLen)
	s.SealError = reason
	c.Record(EvSealFailed, -1, now, map[string]any{"reason": reason})
	c.Effects = append(c.Effects, Effect{Kind: EffectSealFailure, Slot: -1})
	return c, nil
}

func checkSealing(s *Session) error {
	switch s.State {
	case SessionSealing:
		return nil
	case SessionComplete:
		return ErrAlreadyComplete
	}
	return ErrNotSealing
}

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}
