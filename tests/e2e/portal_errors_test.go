package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/tokens"
)

// mintAccess issues a portal access token for rd's slot with the service's token keys (or
// with keys when given), as if issued at issuedAt.
func mintAccess(t testing.TB, rd ready, issuedAt time.Time, keys string) string {
	t.Helper()
	if keys == "" {
		keys = svc.settings["TOKEN_KEYS"]
	}
	ring, err := tokens.ParseKeyRing(keys)
	if err != nil {
		t.Fatal(err)
	}
	c := tokens.NewCodec(ring, tokens.WithClock(func() time.Time { return issuedAt }))
	tok, _, err := c.IssuePortalAccess(tokens.PortalAccess{GroupID: rd.GroupID, SlotIndex: rd.Index, SessionID: rd.SessionID,
		SessionExpiresAt: parseTime(t, rd.ExpiresAt)})
	if err != nil {
		t.Fatal(err)
	}
	remember("token", tok)
	return tok
}

// foreignKeys is a TOKEN_KEYS value the service does not know, with the service's kid, so
// only the signature tells the forgery apart.
func foreignKeys(t testing.TB) string {
	t.Helper()
	kid := strings.SplitN(strings.SplitN(svc.settings["TOKEN_KEYS"], ",", 2)[0], ":", 2)[0]
	return kid + ":" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("forged-key-", 4)))
}

// TestPortalBadTokens: every access-token route of the portal and the document proxy answer
// a missing, garbage, wrong-kind, forged, expired or unknown-slot token with 401 and the
// token's code, and none of them changes the slot.
func TestPortalBadTokens(t *testing.T) {
	t.Parallel()
	body := createBody(t, "parallel", 2)
	created := slotsOf(t, createSession(t, tenantA, body), "slots")
	a := activate(t, created[0].Link)
	if a.Status != http.StatusOK {
		t.Fatalf("activate %d %s", a.Status, a.Raw)
	}
	rd := ready{GroupID: a.str("groupId"), SessionID: a.str("sessionId"), Index: 0, ExpiresAt: a.str("expiresAt")}
	good := a.str("accessToken")
	tamper := good[:len(good)-4] + flip(good[len(good)-4:])
	otherSession := rd
	otherSession.SessionID = uuid.NewString()

	toks := []struct {
		name, tok, code string
	}{
		{"garbage", "not-a-token", "token_invalid"},
		{"three garbage parts", "abc.def.ghi", "token_invalid"},
		{"slot link token (wrong kind)", linkToken(t, created[1].Link), "token_wrong_kind"},
		{"tampered signature", tamper, "token_invalid"},
		{"signed with another key", mintAccess(t, rd, time.Now(), foreignKeys(t)), "token_invalid"},
		{"expired", mintAccess(t, rd, time.Now().Add(-2*time.Hour), ""), "token_expired"},
		{"not the slot's portal session", mintAccess(t, otherSession, time.Now(), ""), "token_invalid"},
	}
	routes := []struct {
		name string
		do   func(tok string) reply
	}{
		{"GET session", func(tok string) reply { return portal(t, "GET", "session", tok, nil) }},
		{"POST viewed", func(tok string) reply { return portal(t, "POST", "viewed", tok, nil) }},
		{"POST consent", func(tok string) reply { return portal(t, "POST", "consent", tok, consentAll()) }},
		{"POST decline", func(tok string) reply { return portal(t, "POST", "decline", tok, nil) }},
		{"GET document", func(tok string) reply { return document(t, tok) }},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			for _, tk := range toks {
				r := rt.do(tk.tok)
				if r.Status != http.StatusUnauthorized || r.code() != tk.code {
					t.Errorf("%s: %d %s, want 401 %s", tk.name, r.Status, r.Raw, tk.code)
				}
			}
			if rt.name != "GET document" {
				var body any
				if rt.name == "POST consent" {
					body = consentAll()
				}
				r := call(t, strings.Fields(rt.name)[0], svc.url("esign/portal/"+strings.Fields(rt.name)[1]), body, nil)
				if r.Status != http.StatusUnauthorized || r.code() != "token_missing" {
					t.Errorf("no token: %d %s", r.Status, r.Raw)
				}
			}
		})
	}

	t.Run("activate", func(t *testing.T) {
		cases := []struct {
			name   string
			body   any
			status int
			code   string
		}{
			{"no token", map[string]any{}, 400, "invalid_request"},
			{"garbage", map[string]any{"token": "garbage"}, 401, "token_invalid"},
			{"access token (wrong kind)", map[string]any{"token": good}, 401, "token_wrong_kind"},
			{"used link", map[string]any{"token": linkToken(t, created[0].Link)}, 401, "link_used"},
			{"not JSON", "{", 400, "invalid_json"},
		}
		for _, c := range cases {
			r := call(t, "POST", svc.url("esign/portal/activate"), c.body, nil)
			if r.Status != c.status || r.code() != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Raw, c.status, c.code)
			}
		}
	})

	// Nothing above changed the slot: still activated, the other still pending.
	st := status(t, tenantA, body["correlationId"].(string))
	if slotStatus(st, 0)["state"] != "activated" || slotStatus(st, 1)["state"] != "pending" || st.str("state") != "in_progress" {
		t.Errorf("status after bad tokens %s", st.Raw)
	}
	// The genuine token still works.
	if r := portal(t, "GET", "session", good, nil); r.Status != http.StatusOK {
		t.Errorf("good token %d %s", r.Status, r.Raw)
	}
}

func flip(s string) string {
	b := []byte(s)
	for i := range b {
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
	}
	return string(b)
}

// TestCallbackRejects: forged, stale, unsigned, tampered, replayed, cross-tenant and
// inconsistent callbacks are refused with their 4xx problem and change nothing; the genuine
// callback is accepted once.
func TestCallbackRejects(t *testing.T) {
	t.Parallel()
	body := createBody(t, "parallel", 2)
	corr := body["correlationId"].(string)
	created := slotsOf(t, createSession(t, tenantA, body), "slots")
	rd := walk(t, created[0].Link)

	// A consented slot of another tenant's session.
	otherBody := createBody(t, "single", 1)
	otherBody["pdfBlobPath"], otherBody["pdfHash"] = uploadFixtureAs(t, tenantB, "template-3p.pdf")
	other := walk(t, slotsOf(t, createSession(t, tenantB, otherBody), "slots")[0].Link)

	secret := callbackSecret(t)
	marshal := func(m map[string]any) []byte {
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	genuine := callbackBody(rd)
	raw := marshal(genuine)
	now := time.Now()
	with := func(patch func(m map[string]any)) []byte {
		m := callbackBody(rd)
		patch(m)
		return marshal(m)
	}
	wrongAccepted := with(func(m map[string]any) {
		cs := []map[string]any{}
		for _, c := range rd.Consents {
			d := map[string]any{}
			for k, v := range c {
				d[k] = v
			}
			d["acceptedAt"] = parseTime(t, c["acceptedAt"].(string)).Add(-time.Second).Format(time.RFC3339Nano)
			cs = append(cs, d)
		}
		m["consents"] = cs
	})
	crossTenant := with(func(m map[string]any) { m["accessToken"] = other.Access })
	otherSlot := with(func(m map[string]any) { m["sessionId"] = created[1].SessionID })
	badFields := with(func(m map[string]any) {
		m["fields"] = []map[string]any{{"name": "esign.seller.text.title", "value": "x"}}
	})
	unknownSession := with(func(m map[string]any) { m["sessionId"] = uuid.NewString() })
	badPNG := with(func(m map[string]any) { m["signaturePng"] = "aGVsbG8=" })

	cases := []struct {
		name   string
		raw    []byte
		sig    string
		status int
		code   string
	}{
		{"no signature header", raw, "", 401, callbacksig.CodeMissing},
		{"garbage header", raw, "v1=abc", 401, callbacksig.CodeInvalid},
		{"forged with another secret", raw, callbacksig.Sign("another-secret-another-secret-0123456789", now, raw), 401, callbacksig.CodeInvalid},
		{"signed over other bytes", raw, callbacksig.Sign(secret, now, append([]byte(" "), raw...)), 401, callbacksig.CodeInvalid},
		{"stale", raw, callbacksig.Sign(secret, now.Add(-10*time.Minute), raw), 401, callbacksig.CodeStale},
		{"from the future", raw, callbacksig.Sign(secret, now.Add(10*time.Minute), raw), 401, callbacksig.CodeStale},
		{"another tenant's token", crossTenant, callbacksig.Sign(secret, now, crossTenant), 403, "token_wrong_slot"},
		{"another slot's sessionId", otherSlot, callbacksig.Sign(secret, now, otherSlot), 403, "token_wrong_slot"},
		{"unknown sessionId", unknownSession, callbacksig.Sign(secret, now, unknownSession), 403, "token_wrong_slot"}, // the token names the slot
		{"consents not as recorded", wrongAccepted, callbacksig.Sign(secret, now, wrongAccepted), 409, "consent_mismatch"},
		{"fields of another role", badFields, callbacksig.Sign(secret, now, badFields), 400, "invalid_fields"},
		{"not a PNG", badPNG, callbacksig.Sign(secret, now, badPNG), 400, "invalid_signature"},
		{"not JSON", []byte("{"), callbacksig.Sign(secret, now, []byte("{")), 400, "invalid_json"},
	}
	for _, c := range cases {
		r := postCallback(t, c.raw, c.sig)
		if r.Status != c.status || (c.code != "" && r.code() != c.code) {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Raw, c.status, c.code)
		}
	}
	st := status(t, tenantA, corr)
	if slotStatus(st, 0)["state"] != "viewed" && slotStatus(st, 0)["state"] != "activated" {
		t.Fatalf("slot 0 changed by refused callbacks: %v", slotStatus(st, 0))
	}
	if slotStatus(st, 0)["state"] == "signed" || strings.Contains(string(st.Raw), "slot.signed") {
		t.Fatalf("a refused callback signed: %s", st.Raw)
	}

	// The genuine callback is accepted once.
	if r := postCallback(t, raw, callbacksig.Sign(secret, time.Now(), raw)); r.Status != http.StatusOK || r.str("slotState") != "signed" {
		t.Fatalf("genuine callback %d %s", r.Status, r.Raw)
	}
	// The same body again (a replay, freshly signed or with the old header) is refused.
	if r := postCallback(t, raw, callbacksig.Sign(secret, time.Now(), raw)); r.Status != http.StatusUnauthorized || r.code() != "callback_replayed" {
		t.Errorf("replay: %d %s", r.Status, r.Raw)
	}
	// A second, different submission for the signed slot is a conflict.
	second := with(func(m map[string]any) {})
	if r := postCallback(t, second, callbacksig.Sign(secret, time.Now(), second)); r.Status != http.StatusConflict || r.code() != "slot_already_signed" {
		t.Errorf("second submission: %d %s", r.Status, r.Raw)
	}
	st = status(t, tenantA, corr)
	if kinds := eventKinds(st, 0); count(kinds, "slot.signed") != 1 {
		t.Errorf("slot 0 events %v", kinds)
	}
	if st.str("state") != "in_progress" {
		t.Errorf("session after one of two signatures %s", st.Raw)
	}
	// The other tenant's slot was not touched.
	if ost := status(t, tenantB, otherBody["correlationId"].(string)); slotStatus(ost, 0)["state"] == "signed" {
		t.Errorf("other tenant's slot %v", slotStatus(ost, 0))
	}
}

// TestEndedSessionIsGone: after cancel or revoke, every portal route, the document proxy, an
// unused link and the callback answer 410.
func TestEndedSessionIsGone(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"cancel", "revoke"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			body := createBody(t, "parallel", 2)
			cr := createSession(t, tenantA, body)
			created := slotsOf(t, cr, "slots")
			rd := walk(t, created[0].Link)
			cb := callbackBody(rd)
			r := call(t, "POST", svc.url("esign/session/"+cr.str("groupId")+"/"+how), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
			if r.Status != http.StatusOK || r.str("state") != "cancelled" {
				t.Fatalf("%s %d %s", how, r.Status, r.Raw)
			}
			checks := map[string]reply{
				"activate unused link": activate(t, created[1].Link),
				"session":              portal(t, "GET", "session", rd.Access, nil),
				"viewed":               portal(t, "POST", "viewed", rd.Access, nil),
				"consent":              portal(t, "POST", "consent", rd.Access, consentAll()),
				"decline":              portal(t, "POST", "decline", rd.Access, nil),
				"document":             document(t, rd.Access),
				"callback":             signedCallback(t, cb),
			}
			for name, r := range checks {
				if r.Status != http.StatusGone {
					t.Errorf("%s: %d %s, want 410", name, r.Status, r.Raw)
				}
			}
			if st := status(t, tenantA, body["correlationId"].(string)); strings.Contains(string(st.Raw), "slot.signed") {
				t.Errorf("signed after %s: %s", how, st.Raw)
			}
		})
	}
}
