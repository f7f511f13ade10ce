package tokens

import (
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/keyring"
)

// FuzzParseToken feeds arbitrary strings to every verifier: none may panic, every failure must
// be a KindUnauthenticated *apperr.Error, and anything accepted must have been signed by us.
func FuzzParseToken(f *testing.F) {
	c := codecAt(f, t0)
	exp := t0.Add(time.Hour)
	slot, _, _ := c.IssueSlot(Slot{GroupID: "g", SlotIndex: 1, ExpiresAt: exp})
	portal, _, _ := c.IssuePortalAccess(PortalAccess{GroupID: "g", SessionID: "s", SessionExpiresAt: exp})
	deliv, _ := c.IssueDelivery(Delivery{DeliveryID: "d", ExpiresAt: exp})
	wf, _, _ := c.IssueWorkflowPortal(WorkflowPortal{WorkflowID: "w", Participant: "p", Role: RoleParticipant})
	for _, s := range []string{slot, portal, deliv, wf, "", ".", "..", "a.b.c", "eyJhbGciOiJub25lIn0.e30."} {
		f.Add(s)
	}
	wrongKey := codecAt(f, t0, keyring.Key{ID: "k1", Secret: secret(2)})
	f.Fuzz(func(t *testing.T, s string) {
		errs := []error{}
		if _, err := c.VerifySlot(s); err != nil {
			errs = append(errs, err)
		}
		if _, err := c.VerifyPortalAccess(s); err != nil {
			errs = append(errs, err)
		}
		if _, err := c.VerifyDelivery(s); err != nil {
			errs = append(errs, err)
		}
		if _, err := c.VerifyWorkflowPortal(s); err != nil {
			errs = append(errs, err)
		}
		if len(errs) < 3 {
			t.Fatalf("%q accepted as more than one kind", s)
		}
		for _, err := range errs {
			if apperr.KindOf(err) != apperr.KindUnauthenticated {
				t.Fatalf("%q: error %v is not KindUnauthenticated", s, err)
			}
		}
		if len(errs) == 3 {
			// Accepted: the signature must be what made it pass, so the same kid with another
			// secret refuses it as every kind.
			_, e1 := wrongKey.VerifySlot(s)
			_, e2 := wrongKey.VerifyPortalAccess(s)
			_, e3 := wrongKey.VerifyDelivery(s)
			_, e4 := wrongKey.VerifyWorkflowPortal(s)
			if e1 == nil || e2 == nil || e3 == nil || e4 == nil {
				t.Fatalf("%q accepted without our key", s)
			}
		}
	})
}
