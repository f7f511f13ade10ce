package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestStorageCallsPerPortalAction holds the portal's routes on a session to one use-case call
// each (issue 23): activate, viewed, consent and decline in a point read and one transaction
// (the token's checks run on that one load, not on a read before it), the session view in a
// point read. A decline that ends the session also releases its correlationId (one delete of
// the claim row). Activate and decline publish an event (slot.activated, slot.declined; issue
// 27), so each first puts the event outbox's schedule entry (one upsert). It runs alone (not parallel), as TestStorageCallsPerCreateAndCallback does.
func TestStorageCallsPerPortalAction(t *testing.T) {
	const app = "esign-dispatcher"
	body := createBody(t, "parallel", 2)
	body["correlationId"] = "count-portal-" + uuid.NewString()
	created := call(t, "POST", svc.url("esign/session"), body, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
	if created.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Status, created.Raw)
	}
	link := slotsOf(t, created, "slots")[0].Link

	counted := func(name string, transaction bool, extra, outbox int, do func() reply) reply {
		t.Helper()
		m := svc.counter.mark(app)
		r := do()
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", name, r.Status, r.Raw)
		}
		calls := svc.counter.since(app, m)
		t.Logf("%s: %d storage calls: %v", name, len(calls), calls)
		want, wantBatches := 1+extra+outbox, 0
		if transaction {
			want, wantBatches = 2+extra+outbox, 1
		}
		if len(calls) != want || batches(calls) != wantBatches || outboxEntries(calls) != outbox || !strings.HasPrefix(calls[0], "GET table ") {
			t.Errorf("%s made %v, want a point read%s, %d outbox entries and %d more", name, calls, map[bool]string{true: " and one transaction"}[transaction], outbox, extra)
		}
		return r
	}
	a := counted("activate", true, 0, 1, func() reply { return activate(t, link) })
	s := counted("session", false, 0, 0, func() reply { return portal(t, "GET", "session", a.str("accessToken"), nil) })
	v := counted("viewed", true, 0, 0, func() reply { return portal(t, "POST", "viewed", s.str("accessToken"), nil) })
	c := counted("consent", true, 0, 0, func() reply { return portal(t, "POST", "consent", v.str("accessToken"), consentAll()) })
	counted("decline", true, 1, 1, func() reply {
		return portal(t, "POST", "decline", c.str("accessToken"), map[string]any{"reason": "not mine"})
	})
}
