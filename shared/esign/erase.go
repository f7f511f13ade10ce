package esign

import (
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// EraseContact removes slot i's e-mail (its hash and its encrypted value) and phone number. It is
// allowed once the session is over (complete, cancelled or expired): a live session still needs
// the address to invite and to send codes. The pii.erased event names what was removed.
func EraseContact(s *Session, slots []Slot, i int, now time.Time) (Change, error) {
	var c Change
	if !s.State.Terminal() {
		return c, &apperr.Error{Kind: apperr.KindConflict, Code: "session_live",
			Detail: "a signer's contact data can be erased once the session is complete, cancelled or expired"}
	}
	sl, err := slotAt(slots, i)
	if err != nil {
		return c, err
	}
	if sl.EmailHash == "" && sl.EmailEnc == "" && sl.PhoneEnc == "" {
		return c, &apperr.Error{Kind: apperr.KindConflict, Code: "already_erased", Detail: "this signer's contact data was already erased"}
	}
	sl.EmailHash, sl.EmailEnc, sl.PhoneEnc = "", "", ""
	c.Touch(i)
	c.Record(EvPIIErased, i, now, map[string]any{"erased": []string{"emailHash", "emailEncrypted", "phoneEncrypted"}})
	return c, nil
}
