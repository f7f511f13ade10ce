package e2e

import (
	"net/http"
	"slices"
	"testing"
)

// signerEmail is the e-mail of signer i of a create body.
func signerEmail(body map[string]any, i int) string {
	return body["signers"].([]any)[i].(map[string]any)["email"].(string)
}

// TestSigningFlowSingle walks one signer from invitation to a sealed document: the outbox
// invitation carries the create answer's link, the callback moves the session to sealing, the
// Seal job completes it, and status shows the full timeline and audit trail.
func TestSigningFlowSingle(t *testing.T) {
	t.Parallel()
	body := createBody(t, "single", 1)
	corr := body["correlationId"].(string)
	created := slotsOf(t, createSession(t, tenantA, body), "slots")

	inv := waitInvitations(t, signerEmail(body, 0), 1)
	if len(inv) != 1 {
		t.Fatalf("%d invitations, want 1", len(inv))
	}
	sameLink(t, inv[0].Link, created[0].Link)
	if inv[0].CorrelationID == "" {
		t.Error("invitation without correlation id")
	}

	cb := sign(t, inv[0].Link)
	if cb.str("sessionState") != "sealing" {
		t.Fatalf("after the only signature the session is %q, want sealing: %s", cb.str("sessionState"), cb.Raw)
	}
	st := waitState(t, tenantA, corr, "complete")
	if st.str("signedDocumentPath") == "" || st.str("certificatePath") == "" || st.str("completedAt") == "" {
		t.Errorf("complete status lacks its outputs: %s", st.Raw)
	}
	if s := slotStatus(st, 0); s["state"] != "signed" || s["signerName"] != "Pat Signer" {
		t.Errorf("slot 0 status %v", s)
	}
	checkTimeline(t, st, 0, "pending", "activated", "viewed", "signed")
	kinds := eventKinds(st, -1)
	for _, k := range []string{"session.created", "slot.invited", "slot.activated", "slot.viewed", "slot.consented",
		"slot.signed", "session.sealing", "session.completed"} {
		if !slices.Contains(kinds, k) {
			t.Errorf("events lack %s: %v", k, kinds)
		}
	}
	if !inOrder(kinds, "slot.activated", "slot.viewed", "slot.consented", "slot.signed", "session.sealing", "session.completed") {
		t.Errorf("events out of order: %v", kinds)
	}
	// The sealed session no longer takes portal actions: the link was used, the slot is closed.
	if a := activate(t, inv[0].Link); a.Status < 400 || a.Status >= 500 {
		t.Errorf("activate after completion %d %s", a.Status, a.Raw)
	}
}

// TestSigningFlowParallel: both signers are invited at once and may sign in any order; the
// session stays in_progress until the last required slot is signed, then seals and completes.
func TestSigningFlowParallel(t *testing.T) {
	t.Parallel()
	body := createBody(t, "parallel", 2)
	corr := body["correlationId"].(string)
	created := slotsOf(t, createSession(t, tenantA, body), "slots")

	inv0 := waitInvitations(t, signerEmail(body, 0), 1)
	inv1 := waitInvitations(t, signerEmail(body, 1), 1)
	sameLink(t, inv0[0].Link, created[0].Link)
	sameLink(t, inv1[0].Link, created[1].Link)

	// The second signer signs first.
	if cb := sign(t, inv1[0].Link); cb.str("sessionState") != "in_progress" {
		t.Fatalf("after one of two signatures the session is %q: %s", cb.str("sessionState"), cb.Raw)
	}
	if st := status(t, tenantA, corr); st.str("state") != "in_progress" || slotStatus(st, 0)["state"] != "pending" {
		t.Fatalf("status between signatures %s", st.Raw)
	}
	if cb := sign(t, inv0[0].Link); cb.str("sessionState") != "sealing" {
		t.Fatalf("after both signatures the session is %q: %s", cb.str("sessionState"), cb.Raw)
	}
	st := waitState(t, tenantA, corr, "complete")
	for i := 0; i < 2; i++ {
		checkTimeline(t, st, i, "pending", "activated", "viewed", "signed")
	}
	kinds := eventKinds(st, -1)
	if n := count(kinds, "slot.signed"); n != 2 {
		t.Errorf("%d slot.signed events: %v", n, kinds)
	}
	if n := count(kinds, "session.sealing"); n != 1 {
		t.Errorf("%d session.sealing events: %v", n, kinds)
	}
	if !inOrder(kinds, "session.sealing", "session.completed") {
		t.Errorf("events %v", kinds)
	}
}

// TestSigningFlowSequential: only the first signer is invited at creation; the second cannot
// activate before its turn, is invited after the first signs (the invitation follows the first
// signature in the outbox), and its signature seals the session.
func TestSigningFlowSequential(t *testing.T) {
	t.Parallel()
	body := createBody(t, "sequential", 2)
	corr := body["correlationId"].(string)
	created := slotsOf(t, createSession(t, tenantA, body), "slots")

	first := waitInvitations(t, signerEmail(body, 0), 1)
	sameLink(t, first[0].Link, created[0].Link)
	if st := status(t, tenantA, corr); slotStatus(st, 1)["invited"] != false {
		t.Fatalf("the second signer is invited before the first signed: %v", slotStatus(st, 1))
	}
	// Not yet the second signer's turn: the link is refused without being consumed.
	if a := activate(t, created[1].Link); a.Status != http.StatusConflict {
		t.Fatalf("second signer activating early: %d %s", a.Status, a.Raw)
	}

	if cb := sign(t, first[0].Link); cb.str("sessionState") != "in_progress" {
		t.Fatalf("after the first signature the session is %q: %s", cb.str("sessionState"), cb.Raw)
	}
	second := waitInvitations(t, signerEmail(body, 1), 1)
	if len(second) != 1 {
		t.Fatalf("%d invitations to the second signer, want 1", len(second))
	}
	st := status(t, tenantA, corr)
	signed0 := slotStatus(st, 0)["timeline"].(map[string]any)["signed"].(string)
	if !second[0].SentAt.After(parseTime(t, signed0)) {
		t.Errorf("second invitation sent at %s, before the first signature at %s", second[0].SentAt, signed0)
	}
	if len(invitations(t, signerEmail(body, 0))) != 1 {
		t.Error("the first signer got a second invitation")
	}
	sameLink(t, second[0].Link, created[1].Link)

	if cb := sign(t, second[0].Link); cb.str("sessionState") != "sealing" {
		t.Fatalf("after the last signature the session is %q: %s", cb.str("sessionState"), cb.Raw)
	}
	st = waitState(t, tenantA, corr, "complete")
	checkTimeline(t, st, 0, "pending", "activated", "viewed", "signed")
	checkTimeline(t, st, 1, "pending", "activated", "viewed", "signed")
	s0 := parseTime(t, slotStatus(st, 0)["timeline"].(map[string]any)["signed"].(string))
	a1 := parseTime(t, slotStatus(st, 1)["timeline"].(map[string]any)["activated"].(string))
	if !a1.After(s0) {
		t.Errorf("slot 1 activated at %s, before slot 0 signed at %s", a1, s0)
	}
}

// TestOptionalSlotLeftUnsigned: a session whose only other slot is optional seals and
// completes once the required slot is signed, leaving the optional slot unsigned.
func TestOptionalSlotLeftUnsigned(t *testing.T) {
	t.Parallel()
	body := createBody(t, "parallel", 2)
	body["signers"].([]any)[1].(map[string]any)["completionCondition"] = "optional"
	corr := body["correlationId"].(string)
	created := slotsOf(t, createSession(t, tenantA, body), "slots")
	waitInvitations(t, signerEmail(body, 1), 1)

	if cb := sign(t, created[0].Link); cb.str("sessionState") != "sealing" {
		t.Fatalf("after the required signature the session is %q: %s", cb.str("sessionState"), cb.Raw)
	}
	st := waitState(t, tenantA, corr, "complete")
	opt := slotStatus(st, 1)
	if opt["completionCondition"] != "optional" || opt["state"] == "signed" {
		t.Errorf("optional slot %v", opt)
	}
	if st.str("signedDocumentPath") == "" {
		t.Errorf("complete without a signed document: %s", st.Raw)
	}
}

// TestDeclineEndsSession: a declined required slot cancels the session with reason declined;
// the other signer's link and the decliner's token are then 410.
func TestDeclineEndsSession(t *testing.T) {
	t.Parallel()
	body := createBody(t, "parallel", 2)
	corr := body["correlationId"].(string)
	created := slotsOf(t, createSession(t, tenantA, body), "slots")
	a := activate(t, created[0].Link)
	if a.Status != http.StatusOK {
		t.Fatalf("activate %d %s", a.Status, a.Raw)
	}
	d := portal(t, "POST", "decline", a.str("accessToken"), map[string]any{"reason": "wrong amount"})
	if d.Status != http.StatusOK || d.str("slotState") != "declined" || d.str("sessionState") != "cancelled" {
		t.Fatalf("decline %d %s", d.Status, d.Raw)
	}
	st := status(t, tenantA, corr)
	if st.str("state") != "cancelled" || st.str("cancelReason") != "declined" || slotStatus(st, 0)["state"] != "declined" {
		t.Fatalf("status after decline %s", st.Raw)
	}
	if kinds := eventKinds(st, -1); !inOrder(kinds, "slot.activated", "slot.declined", "session.cancelled") {
		t.Errorf("events %v", kinds)
	}
	if r := activate(t, created[1].Link); r.Status != http.StatusGone {
		t.Errorf("other signer after decline %d %s", r.Status, r.Raw)
	}
	if r := portal(t, "GET", "session", d.str("accessToken"), nil); r.Status != http.StatusGone {
		t.Errorf("decliner's session after decline %d %s", r.Status, r.Raw)
	}
}

// TestResendInvite: resending to an activated slot gives a fresh link that works, refuses the
// old link with 401, makes the earlier access token view-only and puts the new invitation in
// the outbox.
func TestResendInvite(t *testing.T) {
	t.Parallel()
	body := createBody(t, "parallel", 2)
	corr := body["correlationId"].(string)
	created := slotsOf(t, createSession(t, tenantA, body), "slots")
	addr := signerEmail(body, 0)
	waitInvitations(t, addr, 1)
	a := activate(t, created[0].Link)
	if a.Status != http.StatusOK {
		t.Fatalf("activate %d %s", a.Status, a.Raw)
	}

	rs := call(t, "POST", svc.url("esign/session/"+corr+"/resend-invite"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
	if rs.Status != http.StatusOK {
		t.Fatalf("resend %d %s", rs.Status, rs.Raw)
	}
	resent := slotsOf(t, rs, "resent")
	if len(resent) != 1 || resent[0].Index != 0 || resent[0].SessionID != created[0].SessionID {
		t.Fatalf("resent %s (only the activated slot 0 is eligible)", rs.Raw)
	}
	if claimsOf(t, linkToken(t, resent[0].Link))["jti"] == claimsOf(t, linkToken(t, created[0].Link))["jti"] {
		t.Fatal("resend kept the old link id")
	}

	inv := waitInvitations(t, addr, 2)
	if len(inv) != 2 {
		t.Fatalf("%d invitations, want 2", len(inv))
	}
	sameLink(t, inv[1].Link, resent[0].Link)
	if len(invitations(t, signerEmail(body, 1))) != 1 {
		t.Error("the pending signer was re-invited")
	}

	if old := activate(t, created[0].Link); old.Status != http.StatusUnauthorized || old.code() != "link_replaced" {
		t.Errorf("old link after resend %d %s", old.Status, old.Raw)
	}
	// The access token of the earlier activation is view-only now, as after a cross-device
	// redeem: it reads the session, it no longer acts.
	if c := portal(t, "POST", "consent", a.str("accessToken"), consentAll()); c.Status != http.StatusConflict || c.code() != "device_secondary" {
		t.Errorf("consent with the access token of before the resend %d %s", c.Status, c.Raw)
	}
	if v := portal(t, "GET", "session", a.str("accessToken"), nil); v.Status != http.StatusOK || v.JSON["viewOnly"] != true {
		t.Errorf("session with the access token of before the resend %d %s", v.Status, v.Raw)
	}
	if cb := sign(t, inv[1].Link); cb.str("slotState") != "signed" {
		t.Errorf("signing through the new link %s", cb.Raw)
	}
	if used := activate(t, inv[1].Link); used.Status != http.StatusConflict && used.Status != http.StatusUnauthorized {
		t.Errorf("new link used twice %d %s", used.Status, used.Raw)
	}
}

func count(list []string, v string) int {
	n := 0
	for _, x := range list {
		if x == v {
			n++
		}
	}
	return n
}

// inOrder reports whether want occur in list in this order (not necessarily adjacent).
func inOrder(list []string, want ...string) bool {
	i := 0
	for _, x := range list {
		if i < len(want) && x == want[i] {
			i++
		}
	}
	return i == len(want)
}
