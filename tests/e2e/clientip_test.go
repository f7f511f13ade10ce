package e2e

import (
	"net"
	"net/http"
	"testing"

	"github.com/esign-svc/esign/shared/esign"
)

// TestClientIPCannotBeForged: the address recorded as evidence is the one the front end (the
// local host, as the platform's) appended to X-Forwarded-For, never an entry the client sent
// itself, on an invoked route (create) and a forwarded one (activate) alike.
func TestClientIPCannotBeForged(t *testing.T) {
	t.Parallel()
	const forged = "203.0.113.66"
	hdr := bearer(svc.jwt(t, tenantA, "Esign.Initiator"))
	hdr["X-Forwarded-For"] = forged
	body := createBody(t, "single", 1)
	c := call(t, "POST", svc.url("esign/session"), body, hdr)
	if c.Status != http.StatusCreated {
		t.Fatalf("create with a forged X-Forwarded-For: %d %s", c.Status, c.Raw)
	}
	link := slotsOf(t, c, "slots")[0].Link
	a := call(t, "POST", svc.url("esign/portal/activate"), map[string]any{"token": linkToken(t, link)},
		map[string]string{"X-Forwarded-For": forged + ", 198.51.100.9"})
	if a.Status != http.StatusOK {
		t.Fatalf("activate with a forged X-Forwarded-For: %d %s", a.Status, a.Raw)
	}
	evs, err := xferStore(t).Events(t.Context(), c.str("groupId"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, ev := range evs {
		seen[ev.Kind] = ev.IP
	}
	for _, kind := range []string{esign.EvSessionCreated, esign.EvSlotActivated} {
		ip, ok := seen[kind]
		if !ok {
			t.Fatalf("no %s event in %v", kind, seen)
		}
		if a := net.ParseIP(ip); a == nil || !a.IsLoopback() { // the test connects from this machine
			t.Errorf("%s recorded the client address %q, want the one the front end saw", kind, ip)
		}
	}
}
