package esign

import (
	"context"

	"github.com/esign-svc/esign/shared/tokens"
)

// ConsentIn is Consent with the statements in the language the portal showed them in (a
// supported language; "": the slot's locale, else English).
func (u *Sessions) ConsentIn(ctx context.Context, c tokens.PortalAccess, d Device, statements []string, lang string) (*Session, *Slot, error) {
	return u.act(ctx, c, d, true, false, func(s *Session, slots []Slot, i int) (Change, error) {
		return ConsentIn(s, slots, i, u.now(), statements, lang)
	})
}
