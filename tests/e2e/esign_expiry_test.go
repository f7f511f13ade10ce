package e2e

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/tokens"
)

// TestExpiredSessionIsGone lets a one-minute session lapse (about 90 s with the token leeway; the test runs in
// parallel with the rest) with one slot activated and one pending. Once expiresAt has passed,
// every portal route, the document proxy, the unused link, the callback and resend-invite are
// 410, before and after the ExpireSessions timer; the timer then stores the session and its
// unsigned slots as expired with their session.expired and slot.expired events.
func TestExpiredSessionIsGone(t *testing.T) {
	t.Parallel()
	body := createBody(t, "parallel", 2)
	body["expiresInMinutes"] = 1
	corr := body["correlationId"].(string)
	cr := createSession(t, tenantA, body)
	created := slotsOf(t, cr, "slots")
	expiresAt := parseTime(t, cr.str("expiresAt"))

	rd := walk(t, created[0].Link) // slot 0: activated, viewed, consented
	if d := document(t, rd.Access); d.Status != http.StatusOK || d.Header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("document before expiry %d", d.Status)
	}
	cbBody := callbackBody(rd) // prepared while live, sent after expiry

	// Wait for the deadline itself (the session's own clock), not for any background work:
	// past expiresAt and past the tokens' clock leeway, so every token the signer holds has
	// lapsed too, as it has for a signer coming back to the portal later.
	time.Sleep(time.Until(expiresAt) + tokens.DefaultLeeway + 1500*time.Millisecond)

	gone := func(stage string) {
		t.Helper()
		checks := []struct {
			name string
			r    func() reply
		}{
			{"activate unused link", func() reply { return activate(t, created[1].Link) }},
			{"activate used link", func() reply { return activate(t, created[0].Link) }},
			{"session", func() reply { return portal(t, "GET", "session", rd.Access, nil) }},
			{"viewed", func() reply { return portal(t, "POST", "viewed", rd.Access, nil) }},
			{"consent", func() reply { return portal(t, "POST", "consent", rd.Access, consentAll()) }},
			{"decline", func() reply { return portal(t, "POST", "decline", rd.Access, nil) }},
			{"document", func() reply { return document(t, rd.Access) }},
			{"callback", func() reply { return signedCallback(t, cbBody) }},
			{"resend-invite", func() reply {
				return call(t, "POST", svc.url("esign/session/"+corr+"/resend-invite"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
			}},
		}
		for _, c := range checks {
			if r := c.r(); r.Status != http.StatusGone {
				t.Errorf("%s, %s: %d %s, want 410", stage, c.name, r.Status, r.Raw)
			}
		}
	}
	gone("before the timer")

	ctx, cancel := context.WithTimeout(context.Background(), asyncDeadline)
	defer cancel()
	if err := svc.host.RunTimer(ctx, "ExpireSessions"); err != nil {
		t.Fatalf("ExpireSessions: %v", err)
	}
	st := status(t, tenantA, corr)
	if st.str("state") != "expired" {
		t.Fatalf("stored state after the timer: %s", st.Raw)
	}
	for i := 0; i < 2; i++ {
		if s := slotStatus(st, i); s["state"] != "expired" {
			t.Errorf("slot %d after the timer: %v", i, s)
		}
		if kinds := eventKinds(st, i); !slices.Contains(kinds, "slot.expired") {
			t.Errorf("slot %d events lack slot.expired: %v", i, kinds)
		}
	}
	kinds := eventKinds(st, -1)
	if count(kinds, "session.expired") != 1 || !inOrder(kinds, "slot.consented", "session.expired") {
		t.Errorf("events %v", kinds)
	}
	if slices.Contains(kinds, "session.sealing") {
		t.Errorf("an expired session was sealed: %v", kinds)
	}
	gone("after the timer")

	// Running the timer again changes nothing (one session.expired).
	if err := svc.host.RunTimer(ctx, "ExpireSessions"); err != nil {
		t.Fatalf("ExpireSessions again: %v", err)
	}
	if again := eventKinds(status(t, tenantA, corr), -1); count(again, "session.expired") != 1 {
		t.Errorf("second timer run: %v", again)
	}
}
