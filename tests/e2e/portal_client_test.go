package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify/outbox"
)

// asyncDeadline bounds every wait for the processor's queue work (Notify, Seal).
const asyncDeadline = 45 * time.Second

// eventually polls cond every 200 ms until it returns true or the deadline passes, then fails
// the test with what.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(asyncDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", asyncDeadline, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// linkToken is the token query parameter of a portal link (remembered for the log check).
func linkToken(t testing.TB, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatalf("portal link does not parse")
	}
	tok := u.Query().Get("token")
	if tok == "" {
		t.Fatal("portal link without token")
	}
	remember("token", tok)
	return tok
}

// claimsOf decodes a JWS payload without verifying it (to compare link ids).
func claimsOf(t testing.TB, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token is not a compact JWS")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// createdSlots is the slots of a create (or resend) answer, by slotIndex.
type createdSlot struct {
	Index     int
	SessionID string
	Link      string
}

func slotsOf(t testing.TB, r reply, key string) []createdSlot {
	t.Helper()
	var out []createdSlot
	list, _ := r.JSON[key].([]any)
	for _, s := range list {
		m := s.(map[string]any)
		link, _ := m["portalUrl"].(string)
		linkToken(t, link)
		out = append(out, createdSlot{Index: int(m["slotIndex"].(float64)), SessionID: m["sessionId"].(string), Link: link})
	}
	return out
}

// activate posts the link's token to the portal's activate route.
func activate(t testing.TB, link string) reply {
	t.Helper()
	return call(t, "POST", svc.url("esign/portal/activate"), map[string]any{"token": linkToken(t, link)}, nil)
}

// portal sends an access-token request to a portal route (path under esign/portal/).
func portal(t testing.TB, method, path, tok string, body any) reply {
	t.Helper()
	return call(t, method, svc.url("esign/portal/"+path), body, bearer(tok))
}

// document fetches the document proxy with an access token.
func document(t testing.TB, tok string) reply {
	t.Helper()
	return call(t, "GET", svc.url("esign/document/"+url.PathEscape(tok)), nil, nil)
}

// consentAll is the consent request accepting the three current statements.
func consentAll() map[string]any {
	var ids []string
	for _, s := range esign.ConsentStatements {
		ids = append(ids, s.ID)
	}
	return map[string]any{"statements": ids, "version": esign.ConsentVersion}
}

// ready is a slot walked through activate, viewed and consent: what the callback needs.
type ready struct {
	GroupID   string
	SessionID string
	Index     int
	Access    string           // latest access token
	Fields    []any            // the role's manifest fields as the portal was told
	Consents  []map[string]any // as the consent answer reported them
	ExpiresAt string
}

// walk activates link, reports the document viewed and accepts the consents, checking each
// answer, and returns what the callback needs.
func walk(t testing.TB, link string) ready {
	t.Helper()
	a := activate(t, link)
	if a.Status != http.StatusOK || a.str("slotState") != "activated" || a.str("accessToken") == "" {
		t.Fatalf("activate %d %s", a.Status, a.Raw)
	}
	rd := ready{GroupID: a.str("groupId"), SessionID: a.str("sessionId"), Index: int(a.JSON["slotIndex"].(float64)),
		Access: a.str("accessToken"), ExpiresAt: a.str("expiresAt")}
	rd.Fields, _ = a.JSON["fields"].([]any)
	v := portal(t, "POST", "viewed", rd.Access, nil)
	if v.Status != http.StatusOK || v.str("slotState") != "viewed" {
		t.Fatalf("viewed %d %s", v.Status, v.Raw)
	}
	c := portal(t, "POST", "consent", v.str("accessToken"), consentAll())
	if c.Status != http.StatusOK {
		t.Fatalf("consent %d %s", c.Status, c.Raw)
	}
	rd.Access = c.str("accessToken")
	list, _ := c.JSON["consentsAccepted"].([]any)
	for _, x := range list {
		rd.Consents = append(rd.Consents, x.(map[string]any))
	}
	if len(rd.Consents) != len(esign.ConsentStatements) {
		t.Fatalf("consent answer lists %d acceptances: %s", len(rd.Consents), c.Raw)
	}
	return rd
}

// completedFields fills every non-signature manifest field of the role the way a signer would.
func completedFields(fields []any) []esign.CompletedField {
	out := []esign.CompletedField{}
	yes := true
	for _, f := range fields {
		m := f.(map[string]any)
		name, kind := m["name"].(string), m["kind"].(string)
		switch kind {
		case esign.FieldSignature:
		case esign.FieldCheckbox:
			out = append(out, esign.CompletedField{Name: name, Checked: &yes})
		case esign.FieldDate:
			out = append(out, esign.CompletedField{Name: name, Value: time.Now().UTC().Format("2006-01-02")})
		default:
			out = append(out, esign.CompletedField{Name: name, Value: "AB"})
		}
	}
	return out
}

var signaturePNG = func() string {
	b, err := os.ReadFile(filepath.Join("testdata", "signature.png"))
	if err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}()

// callbackBody is the portal's signed-callback body for a ready slot.
func callbackBody(rd ready) map[string]any {
	return map[string]any{
		"callbackId": uuid.NewString(), "sessionId": rd.SessionID, "accessToken": rd.Access,
		"signerName": "Pat Signer", "signaturePng": signaturePNG, "fields": completedFields(rd.Fields),
		"consents": rd.Consents, "ip": "203.0.113.7", "userAgent": "e2e-test/1.0",
	}
}

// callbackSecret is the current portal callback secret.
func callbackSecret(t testing.TB) string {
	t.Helper()
	s := strings.Split(svc.settings["PORTAL_CALLBACK_SECRETS"], ",")[0]
	if s == "" {
		t.Fatal("no PORTAL_CALLBACK_SECRETS")
	}
	remember("callback secret", s)
	return s
}

// postCallback posts raw with the given signature header ("" sends none).
func postCallback(t testing.TB, raw []byte, sig string) reply {
	t.Helper()
	h := map[string]string{}
	if sig != "" {
		h[callbacksig.Header] = sig
	}
	return call(t, "POST", svc.url("esign/callback"), raw, h)
}

// signedCallback marshals body, signs it with the current secret now and posts it.
func signedCallback(t testing.TB, body map[string]any) reply {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return postCallback(t, raw, callbacksig.Sign(callbackSecret(t), time.Now(), raw))
}

// sign walks link and posts its signed callback, which must be accepted.
func sign(t testing.TB, link string) reply {
	t.Helper()
	r := signedCallback(t, callbackBody(walk(t, link)))
	if r.Status != http.StatusOK || r.str("slotState") != "signed" {
		t.Fatalf("callback %d %s", r.Status, r.Raw)
	}
	return r
}

// mail is an outbox message addressed to one test recipient.
type mail struct {
	outbox.Row
	Link string // the portal link it carries, if any
}

var linkInText = regexp.MustCompile(`https?://[^\s"<>]*[?&]token=[A-Za-z0-9._~%-]+`)

// mailTo lists the outbox messages to recipient in send order.
func mailTo(t testing.TB, recipient string) []mail {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.New(acct, "")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ob.List(context.Background())
	if err != nil && !strings.Contains(err.Error(), "not_found") && !strings.Contains(strings.ToLower(err.Error()), "not found") {
		t.Fatal(err)
	}
	var out []mail
	for _, r := range rows {
		if r.Recipient != recipient {
			continue
		}
		m := mail{Row: r, Link: linkInText.FindString(r.Text)}
		if m.Link != "" {
			linkToken(t, m.Link)
		}
		out = append(out, m)
	}
	return out
}

// invitations lists the invitation e-mails to recipient.
func invitations(t testing.TB, recipient string) []mail {
	t.Helper()
	var out []mail
	for _, m := range mailTo(t, recipient) {
		if m.Kind == "invitation" {
			out = append(out, m)
		}
	}
	return out
}

// waitInvitations waits until recipient has at least n invitations and returns them.
func waitInvitations(t testing.TB, recipient string, n int) []mail {
	t.Helper()
	var got []mail
	eventually(t, "invitation e-mails", func() bool {
		got = invitations(t, recipient)
		return len(got) >= n
	})
	return got
}

// sameLink fails unless both links are of the same portal page and carry slot tokens with the
// same link id, group and slot (the processor issues the slot's current link id again).
func sameLink(t testing.TB, got, want string) {
	t.Helper()
	gu, wu := strings.SplitN(got, "?", 2)[0], strings.SplitN(want, "?", 2)[0]
	if gu != wu {
		t.Errorf("link page %q, want %q", gu, wu)
	}
	g, w := claimsOf(t, linkToken(t, got)), claimsOf(t, linkToken(t, want))
	for _, k := range []string{"jti", "pur"} {
		if g[k] == nil || g[k] != w[k] {
			t.Errorf("link claim %s differs: %v vs %v", k, g[k], w[k])
		}
	}
}

// waitState polls the status route until the session is in state.
func waitState(t testing.TB, tenant, corr, state string) reply {
	t.Helper()
	var st reply
	eventually(t, "session state "+state, func() bool {
		st = status(t, tenant, corr)
		return st.str("state") == state
	})
	return st
}

// eventKinds is the list of audit event kinds of a status answer, optionally of one slot
// (slot < 0: all events).
func eventKinds(st reply, slot int) []string {
	var out []string
	for _, e := range st.JSON["events"].([]any) {
		m := e.(map[string]any)
		if s, ok := m["slot"].(float64); slot >= 0 && (!ok || int(s) != slot) {
			continue
		}
		out = append(out, m["kind"].(string))
	}
	return out
}

// slotStatus is slot i of a status answer.
func slotStatus(st reply, i int) map[string]any {
	return st.JSON["slots"].([]any)[i].(map[string]any)
}

// checkTimeline wants the slot's timeline to hold the states in order with strictly increasing
// nanosecond timestamps.
func checkTimeline(t testing.TB, st reply, i int, states ...string) {
	t.Helper()
	tl, _ := slotStatus(st, i)["timeline"].(map[string]any)
	var prev time.Time
	for _, s := range states {
		v, _ := tl[s].(string)
		at, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			t.Errorf("slot %d timeline lacks %s: %v", i, s, tl)
			return
		}
		if !at.After(prev) {
			t.Errorf("slot %d timeline %s at %s is not after the previous state", i, s, v)
		}
		prev = at
	}
}

func parseTime(t testing.TB, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return at
}
