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
	EffectDeliverSigned   EffectKind = "deliver_signed"   // create the deliveries of ThenDeliverEnc on the signed PDF
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
	if s.ThenDeliverEnc != "" {
		c.Effects = append(c.Effects, Effect{Kind: EffectDeliverSigned, Slot: -1})
	}
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

// Events of the delivery that waits for the session to complete (auto-trigger with esign and
// delivery, DESIGN 9).
const (
	EvDeliveryStarted = "session.delivery_started"
	EvDeliveryFailed  = "session.delivery_failed"
)

// ErrNoDeliveryPlanned: the complete session has no delivery waiting (none was asked for, or it
// was made already).
var ErrNoDeliveryPlanned = apperr.New(apperr.KindConflict, "no_delivery_planned", "the session has no delivery waiting for it")

// DeliveryStarted records the deliveries of the signed PDF and drops the plan (its recipients'
// addresses live on in the delivery sessions only). Errors: ErrNoDeliveryPlanned.
func DeliveryStarted(s *Session, deliveryIDs []string, now time.Time) (Change, error) {
	var c Change
	if s.State != SessionComplete || s.ThenDeliverEnc == "" {
		return c, ErrNoDeliveryPlanned
	}
	s.ThenDeliverEnc = ""
	c.Record(EvDeliveryStarted, -1, now, map[string]any{"deliveryIds": deliveryIDs, "signedPath": s.SignedPath})
	return c, nil
}

// DeliveryFailed records that the deliveries could not be made (code is a problem code, no
// personal data) and drops the plan. Errors: ErrNoDeliveryPlanned.
func DeliveryFailed(s *Session, code string, now time.Time) (Change, error) {
	var c Change
	if s.ThenDeliverEnc == "" {
		return c, ErrNoDeliveryPlanned
	}
	s.ThenDeliverEnc = ""
	c.Record(EvDeliveryFailed, -1, now, map[string]any{"code": code})
	return c, nil
}
