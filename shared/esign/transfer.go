package esign

import (
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// Audit event kinds of the cross-device transfer (the seal job copies every slot.transfer_*
// event, with its actor's IP and user agent, into the evidence certificate).
const (
	EvSlotTransferCreated  = "slot.transfer_created"
	EvSlotTransferRedeemed = "slot.transfer_redeemed"
)

// TransferTTL is the life of a cross-device token (spec "Limits": single use, 10 minutes).
const TransferTTL = 10 * time.Minute

// Transfer is a stored cross-device token: only its SHA-256 (hex) is kept, with the slot and
// the device generation that created it. ETag is the stored row's, for the single-use delete.
type Transfer struct {
	Hash       string
	Slot       int
	Generation int
	CreatedAt  time.Time
	ExpiresAt  time.Time
	ETag       string
}

// ErrTransferInvalid is the one answer for a cross-device token that is unknown, used, expired
// or superseded: the caller cannot tell these apart, so the route is no oracle.
var ErrTransferInvalid = &apperr.Error{Kind: apperr.KindUnauthenticated, Code: "transfer_token_invalid",
	Detail: "this transfer code is not valid: it expired, was used or is unknown; show a new one on the first device"}

// CreateTransfer records that slot i's current device (the caller checks that the token's
// generation is the slot's) showed a cross-device code with the given hash at now. The slot
// must be open and activated; the session live. It returns the audit change (no slot row
// changes) and the transfer to store. Errors: the session gate (410/409), slot_not_open,
// slot_wrong_state for a slot never activated.
func CreateTransfer(s *Session, slots []Slot, i int, now time.Time, hash string) (Change, Transfer, error) {
	var c Change
	sl, err := openSlot(s, slots, i, now)
	if err != nil {
		return c, Transfer{}, err
	}
	if sl.State == SlotPending {
		return c, Transfer{}, ErrSlotWrongState
	}
	t := Transfer{Hash: hash, Slot: i, Generation: sl.Generation, CreatedAt: now, ExpiresAt: now.Add(TransferTTL)}
	if t.ExpiresAt.After(s.ExpiresAt) {
		t.ExpiresAt = s.ExpiresAt
	}
	c.Record(EvSlotTransferCreated, i, now, map[string]any{"generation": sl.Generation,
		"expiresAt": t.ExpiresAt.UTC().Format(time.RFC3339Nano)})
	return c, t, nil
}

// RedeemTransfer moves slot t.Slot to a new device at now: the slot's generation goes up by
// one (tokens of earlier generations become view-only), the OTP send time and any code of the
// earlier device are dropped so the new device can ask for its own code at once (a block or
// the lock count stays), and the new device must pass OTP (EffectiveOTPChannel is e-mail when
// the slot had none). meta is added to the audit event (ip, user agent). Errors:
// ErrTransferInvalid when the token is expired at now or was made by a device generation that
// is no longer current (another transfer was redeemed since); the session gate (410/409);
// slot_not_open.
func RedeemTransfer(s *Session, slots []Slot, t Transfer, now time.Time, meta map[string]any) (Change, error) {
	var c Change
	if !now.Before(t.ExpiresAt) {
		return c, ErrTransferInvalid
	}
	sl, err := openSlot(s, slots, t.Slot, now)
	if err != nil {
		return c, err
	}
	if sl.Generation != t.Generation {
		return c, ErrTransferInvalid
	}
	sl.Generation++
	sl.OTP.UndoSend()
	c.Touch(t.Slot)
	data := map[string]any{"generation": sl.Generation, "otpChannel": string(sl.EffectiveOTPChannel())}
	for k, v := range meta {
		data[k] = v
	}
	c.Record(EvSlotTransferRedeemed, t.Slot, now, data)
	return c, nil
}
