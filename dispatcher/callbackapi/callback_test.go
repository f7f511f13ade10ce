package callbackapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/tokens"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

const secret = "callback-secret-0123456789abcdef0123456789"

type env struct {
	api     *API
	store   *sessionstore.Store
	clock   *apptest.Clock
	handler http.Handler
}

func newEnv(t *testing.T) *env {
	t.Helper()
	x := apptest.New(t)
	api := &API{Sessions: &esign.Sessions{Store: x.Sessions(), Effects: effects.SessionOutputs{}, Now: x.Now}, Tokens: x.Tokens,
		Lapsed: tokens.NewCodec(x.Ring, tokens.WithLeeway(esign.MaxExpiresInMinutes*time.Minute+time.Hour), tokens.WithClock(x.Now)), Secrets: []string{secret}, Now: x.Now}
	mux := http.NewServeMux()
	api.Routes(mux)
	router := funcproto.NewRouter(mux)
	router.Handle("Callback", funcproto.HTTPInvocation(mux))
	return &env{api: api, store: x.Sessions(), clock: x.Clock, handler: router}
}

var manifest = []esign.ManifestField{
	{Name: "esign.signer.signature", Role: "signer", Kind: esign.FieldSignature, Page: 1},
	{Name: "esign.signer.initials", Role: "signer", Kind: esign.FieldInitials, Page: 1},
	{Name: "esign.witness.signature", Role: "witness", Kind: esign.FieldSignature, Page: 1},
}

type fixture struct {
	s      *esign.Session
	slots  []esign.Slot
	tokens []string // access tokens per slot
}

// newSession makes a parallel session of two required slots, both activated, viewed and
// consented, with an access token each.
func (e *env) newSession(t *testing.T) *fixture {
	t.Helper()
	ctx, now := context.Background(), e.clock.Now()
	s := &esign.Session{GroupID: uuid.NewString(), TenantID: "t1", CorrelationID: "C-" + uuid.NewString(), DocumentID: "D",
		DocType: "t", PDFBlobPath: "documents/a.pdf", PDFHash: "sha256:" + strings.Repeat("0", 64), SigningMode: esign.ModeParallel,
		State: esign.SessionPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour), ConsentVersion: esign.ConsentVersion, Manifest: manifest}
	slots := []esign.Slot{
		{Index: 0, SessionID: uuid.NewString(), Role: "signer", EmailHash: "h0", Condition: esign.Required, OTPChannel: esign.OTPNone, LinkJTI: "j0"},
		{Index: 1, SessionID: uuid.NewString(), Role: "witness", EmailHash: "h1", Condition: esign.Required, OTPChannel: esign.OTPNone, LinkJTI: "j1"},
	}
	ch := esign.Start(s, slots, now)
	if err := e.store.Create(ctx, s, slots, ch, now); err != nil {
		t.Fatal(err)
	}
	ids := []string{"document_reviewed", "electronic_signature", "legally_binding"}
	for i := range slots {
		_, _, err := e.store.Update(ctx, s.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
			var all esign.Change
			for _, step := range []func() (esign.Change, error){
				func() (esign.Change, error) { return esign.Activate(s, slots, i, now, nil) },
				func() (esign.Change, error) { return esign.MarkViewed(s, slots, i, now, nil) },
				func() (esign.Change, error) { return esign.Consent(s, slots, i, now, ids) },
			} {
				ch, err := step()
				if err != nil {
					return all, esign.Extras{}, err
				}
				all.Slots = append(all.Slots, ch.Slots...)
				all.Events = append(all.Events, ch.Events...)
			}
			all.Slots = []int{i}
			all.By(esign.Actor{Kind: "signer", ID: slots[i].SessionID})
			return all, esign.Extras{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	s, slots, err := e.store.Load(ctx, s.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s, slots: slots}
	for i := range slots {
		tok, _, err := e.api.Tokens.IssuePortalAccess(tokens.PortalAccess{GroupID: s.GroupID, SlotIndex: i,
			SessionID: slots[i].SessionID, SessionExpiresAt: s.ExpiresAt})
		if err != nil {
			t.Fatal(err)
		}
		f.tokens = append(f.tokens, tok)
	}
	return f
}

func testPNG(t testing.TB, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// body is a valid callback body for slot i of f (modified by the caller as a map).
func (f *fixture) body(t testing.TB, i int) map[string]any {
	t.Helper()
	sl := f.slots[i]
	var consents []map[string]any
	for _, c := range sl.Consents {
		consents = append(consents, map[string]any{"id": c.ID, "version": c.Version, "acceptedAt": c.AcceptedAt})
	}
	fields := []map[string]any{}
	if sl.Role == "signer" {
		fields = append(fields, map[string]any{"name": "esign.signer.initials", "value": "AB"})
	}
	return map[string]any{"callbackId": uuid.NewString(), "sessionId": sl.SessionID, "accessToken": f.tokens[i],
		"signerName": "Ann Signer", "signaturePng": testPNG(t, 40, 20), "fields": fields, "consents": consents,
		"ip": "203.0.113.7", "userAgent": "Mozilla/5.0 test"}
}

type result struct {
	status  int
	body    []byte
	outputs map[string]json.RawMessage
}

func (r result) code(t *testing.T) string {
	t.Helper()
	var p struct{ Code string }
	_ = json.Unmarshal(r.body, &p)
	return p.Code
}

// post runs the Callback invocation with raw as the body and sigHeader as X-Esign-Signature.
func (e *env) post(t *testing.T, raw []byte, sigHeader string) result {
	t.Helper()
	return e.postTyped(t, raw, sigHeader, "application/json")
}

// postTyped is post with the request's Content-Type.
func (e *env) postTyped(t *testing.T, raw []byte, sigHeader, contentType string) result {
	t.Helper()
	headers := map[string][]string{"Content-Type": {contentType}}
	if sigHeader != "" {
		headers[callbacksig.Header] = []string{sigHeader}
	}
	req := map[string]any{"Url": "http://localhost:7071/api/esign/callback", "Method": "POST", "Headers": headers,
		"Params": map[string]string{}, "Body": string(raw)}
	payload, _ := json.Marshal(map[string]any{"Data": map[string]any{"req": req},
		"Metadata": map[string]any{"sys": map[string]any{"MethodName": "Callback"}}})
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/Callback", bytes.NewReader(payload)))
	if rec.Code != http.StatusOK {
		t.Fatalf("invocation status %d: %s", rec.Code, rec.Body)
	}
	var out struct{ Outputs map[string]json.RawMessage }
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	var res funcproto.HTTPResponseData
	if err := json.Unmarshal(out.Outputs["res"], &res); err != nil {
		t.Fatal(err)
	}
	delete(out.Outputs, "res")
	return result{status: res.StatusCode, body: []byte(res.Body), outputs: out.Outputs}
}

func (e *env) postSigned(t *testing.T, b map[string]any) result {
	t.Helper()
	raw, _ := json.Marshal(b)
	return e.post(t, raw, callbacksig.Sign(secret, e.clock.Now(), raw))
}

func TestCallbackSignsAndSeals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t)
	ctx := context.Background()

	first := f.body(t, 0)
	r := e.postSigned(t, first)
	if r.status != http.StatusOK {
		t.Fatalf("first callback: %d %s", r.status, r.body)
	}
	var resp response
	_ = json.Unmarshal(r.body, &resp)
	if resp != (response{GroupID: f.s.GroupID, SlotIndex: 0, SlotState: "signed", SessionState: "in_progress"}) {
		t.Fatalf("answer %+v", resp)
	}
	if _, ok := r.outputs["seal"]; ok {
		t.Fatal("seal queued before the last required slot")
	}
	sig, err := e.store.Signature(ctx, f.s.GroupID, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantPNG, _ := base64.StdEncoding.DecodeString(first["signaturePng"].(string))
	if !bytes.Equal(sig.PNG, wantPNG) || !strings.Contains(sig.Fields, "esign.signer.initials") ||
		!strings.Contains(sig.Consents, esign.ConsentStatements[2].Text) {
		t.Fatalf("stored signature: %d bytes, fields %s, consents %s", len(sig.PNG), sig.Fields, sig.Consents)
	}
	_, slots, _ := e.store.Load(ctx, f.s.GroupID)
	if slots[0].SignerName != "Ann Signer" || slots[0].IP != "203.0.113.7" {
		t.Fatalf("slot 0 %+v", slots[0])
	}

	// The identical callback again (freshly signed): replayed.
	r = e.postSigned(t, first)
	if r.status != http.StatusUnauthorized || r.code(t) != "callback_replayed" {
		t.Fatalf("replay: %d %s", r.status, r.body)
	}
	// Slot 1 with slot 0's callback id: replayed, and slot 1 unchanged.
	reuse := f.body(t, 1)
	reuse["callbackId"] = first["callbackId"]
	r = e.postSigned(t, reuse)
	if r.status != http.StatusUnauthorized || r.code(t) != "callback_replayed" {
		t.Fatalf("reused id: %d %s", r.status, r.body)
	}
	// A new, authentic callback for the signed slot.
	again := f.body(t, 0)
	r = e.postSigned(t, again)
	if r.status != http.StatusConflict || r.code(t) != "slot_already_signed" {
		t.Fatalf("second submission: %d %s", r.status, r.body)
	}

	r = e.postSigned(t, f.body(t, 1))
	if r.status != http.StatusOK {
		t.Fatalf("last callback: %d %s", r.status, r.body)
	}
	_ = json.Unmarshal(r.body, &resp)
	if resp.SessionState != "sealing" {
		t.Fatalf("answer %+v", resp)
	}
	var seal esign.SealMessage
	if err := json.Unmarshal(r.outputs["seal"], &seal); err != nil || seal.GroupID != f.s.GroupID || seal.TenantID != "t1" {
		t.Fatalf("seal output %s: %v", r.outputs["seal"], err)
	}
}

func TestCallbackRefusals(t *testing.T) {
	t.Parallel()
	type tc struct {
		name   string
		build  func(e *env, f *fixture) ([]byte, string)
		status int
		code   string
	}
	signed := func(e *env, b map[string]any) ([]byte, string) {
		raw, _ := json.Marshal(b)
		return raw, callbacksig.Sign(secret, e.clock.Now(), raw)
	}
	with := func(k string, v any) func(e *env, f *fixture) ([]byte, string) {
		return func(e *env, f *fixture) ([]byte, string) {
			b := f.body(t, 0)
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
			return signed(e, b)
		}
	}
	big := base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, sessionstore.MaxSignaturePNG)...))
	cases := []tc{
		{"forged signature", func(e *env, f *fixture) ([]byte, string) {
			raw, _ := json.Marshal(f.body(t, 0))
			return raw, callbacksig.Sign("another-secret-0123456789abcdef012345", e.clock.Now(), raw)
		}, 401, callbacksig.CodeInvalid},
		{"body changed after signing", func(e *env, f *fixture) ([]byte, string) {
			raw, _ := json.Marshal(f.body(t, 0))
			h := callbacksig.Sign(secret, e.clock.Now(), raw)
			return bytes.Replace(raw, []byte("Ann Signer"), []byte("Eve Signer"), 1), h
		}, 401, callbacksig.CodeInvalid},
		{"stale timestamp", func(e *env, f *fixture) ([]byte, string) {
			raw, _ := json.Marshal(f.body(t, 0))
			return raw, callbacksig.Sign(secret, e.clock.Now().Add(-10*time.Minute), raw)
		}, 401, callbacksig.CodeStale},
		{"no signature header", func(e *env, f *fixture) ([]byte, string) {
			raw, _ := json.Marshal(f.body(t, 0))
			return raw, ""
		}, 401, callbacksig.CodeMissing},
		{"bad JSON", func(e *env, f *fixture) ([]byte, string) {
			raw := []byte(`{"callbackId": "x",`)
			return raw, callbacksig.Sign(secret, e.clock.Now(), raw)
		}, 400, "invalid_json"},
		{"body over 2 MiB", func(e *env, f *fixture) ([]byte, string) {
			b := f.body(t, 0)
			b["userAgent"] = strings.Repeat("a", MaxBody)
			return signed(e, b)
		}, 413, "body_too_large"},
		{"junk token", with("accessToken", "abc.def.ghi"), 401, tokens.CodeInvalid},
		{"another slot's token", func(e *env, f *fixture) ([]byte, string) {
			b := f.body(t, 0)
			b["accessToken"] = f.tokens[1]
			return signed(e, b)
		}, 403, "token_wrong_slot"},
		{"unknown sessionId", with("sessionId", uuid.NewString()), 403, "token_wrong_slot"}, // the token names the slot: no index says more
		{"not a PNG", with("signaturePng", base64.StdEncoding.EncodeToString([]byte("GIF89a....."))), 400, "invalid_signature"},
		{"corrupt PNG", with("signaturePng", base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nxxxxxxxxxxxx"))), 400, "invalid_signature"},
		{"not base64", with("signaturePng", "***"), 400, "invalid_request"},
		{"PNG too large", with("signaturePng", big), 413, "signature_too_large"},
		{"field not in manifest", with("fields", []map[string]any{{"name": "esign.signer.initials", "value": "AB"},
			{"name": "esign.witness.text", "value": "x"}}), 400, "invalid_fields"},
		{"field missing", with("fields", []map[string]any{}), 400, "invalid_fields"},
		{"consent missing", func(e *env, f *fixture) ([]byte, string) {
			b := f.body(t, 0)
			b["consents"] = b["consents"].([]map[string]any)[:2]
			return signed(e, b)
		}, 400, "invalid_request"},
		{"consent of another version", func(e *env, f *fixture) ([]byte, string) {
			b := f.body(t, 0)
			b["consents"].([]map[string]any)[0]["version"] = "2020-01-01"
			return signed(e, b)
		}, 400, "invalid_request"},
		{"consent time not the recorded one", func(e *env, f *fixture) ([]byte, string) {
			b := f.body(t, 0)
			b["consents"].([]map[string]any)[0]["acceptedAt"] = "2001-01-01T00:00:00Z"
			return signed(e, b)
		}, 409, "consent_mismatch"},
		{"bad ip", with("ip", "not-an-ip"), 400, "invalid_request"},
		{"empty signer name", with("signerName", " "), 400, "invalid_request"},
		{"bad callback id", with("callbackId", "short"), 400, "invalid_request"},
		{"unknown field", with("extra", 1), 400, "unknown_field"},
		{"control character in the signer name", with("signerName", "Ann\u0085Signer"), 400, "invalid_request"},
		{"line break in the user agent", with("userAgent", "Mozilla\r\nX-Evil: 1"), 400, "invalid_request"},
		{"bidi override in a field value", with("fields", []map[string]any{{"name": "esign.signer.initials", "value": "A\u202eB"}}),
			400, "invalid_fields"},
		// The invocation carries the body as JSON text: invalid UTF-8 reaches the handler as
		// U+FFFD, so the bytes the portal signed are gone and the HMAC fails closed.
		{"invalid UTF-8 through the invocation", func(e *env, f *fixture) ([]byte, string) {
			b := f.body(t, 0)
			b["signerName"] = "Ann"
			raw, _ := json.Marshal(b)
			raw = bytes.Replace(raw, []byte(`"Ann"`), []byte("\"Ann\xff\""), 1)
			return raw, callbacksig.Sign(secret, e.clock.Now(), raw)
		}, 401, callbacksig.CodeInvalid},
		{"null body", func(e *env, f *fixture) ([]byte, string) {
			return []byte(`null`), callbacksig.Sign(secret, e.clock.Now(), []byte(`null`))
		}, 400, "invalid_request"},
		{"array body", func(e *env, f *fixture) ([]byte, string) {
			return []byte(`[]`), callbacksig.Sign(secret, e.clock.Now(), []byte(`[]`))
		}, 400, "invalid_request"},
	}
	// The field the problem names, for the cases that check it.
	fieldOf := map[string]string{"control character in the signer name": "signerName",
		"line break in the user agent": "userAgent", "bidi override in a field value": "fields[0].value"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			f := e.newSession(t)
			raw, h := c.build(e, f)
			r := e.post(t, raw, h)
			if r.status != c.status || (c.code != "" && r.code(t) != c.code) {
				t.Fatalf("%d %s, want %d %s", r.status, r.body, c.status, c.code)
			}
			if f := fieldOf[c.name]; f != "" && !bytes.Contains(r.body, []byte(`"field":"`+f+`"`)) {
				t.Fatalf("%s does not name %s", r.body, f)
			}
			if len(r.outputs) != 0 {
				t.Fatalf("a refused callback queued %v", r.outputs)
			}
			_, slots, err := e.store.Load(context.Background(), f.s.GroupID)
			if err != nil {
				t.Fatal(err)
			}
			if slots[0].State != esign.SlotViewed || slots[1].State != esign.SlotViewed {
				t.Fatalf("slots changed: %s %s", slots[0].State, slots[1].State)
			}
			if _, err := e.store.Signature(context.Background(), f.s.GroupID, 0); apperr.KindOf(err) != apperr.KindNotFound {
				t.Fatalf("a signature was stored: %v", err)
			}
		})
	}
}

// TestCallbackContentTypeAfterTheHMAC: the JSON routes' Content-Type rule holds for the
// callback too, once the signature is verified (a forged one is 401 whatever the type).
func TestCallbackContentTypeAfterTheHMAC(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t)
	raw, _ := json.Marshal(f.body(t, 0))
	if r := e.postTyped(t, raw, callbacksig.Sign(secret, e.clock.Now(), raw), "text/plain"); r.status != 400 || r.code(t) != "unsupported_media_type" {
		t.Fatalf("signed text/plain: %d %s", r.status, r.body)
	}
	forged := callbacksig.Sign("another-secret-0123456789abcdef012345", e.clock.Now(), raw)
	if r := e.postTyped(t, raw, forged, "text/plain"); r.status != 401 || r.code(t) != callbacksig.CodeInvalid {
		t.Fatalf("forged text/plain: %d %s", r.status, r.body)
	}
	if r := e.postTyped(t, raw, callbacksig.Sign(secret, e.clock.Now(), raw), "application/json; charset=utf-8"); r.status != 200 {
		t.Fatalf("signed JSON: %d %s", r.status, r.body)
	}
}

func TestCallbackSecondaryDeviceAndCancelled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t)
	ctx := context.Background()
	set := func(step func(s *esign.Session, slots []esign.Slot) esign.Change) {
		if _, _, err := e.store.Update(ctx, f.s.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
			return step(s, slots), esign.Extras{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	set(func(s *esign.Session, slots []esign.Slot) esign.Change {
		slots[0].Generation = 1
		return esign.Change{Slots: []int{0}}
	})
	if r := e.postSigned(t, f.body(t, 0)); r.status != http.StatusConflict || r.code(t) != "device_secondary" {
		t.Fatalf("secondary: %d %s", r.status, r.body)
	}
	set(func(s *esign.Session, slots []esign.Slot) esign.Change {
		ch, _ := esign.Cancel(s, e.clock.Now(), esign.ReasonCancelled, "oid")
		return ch
	})
	if r := e.postSigned(t, f.body(t, 1)); r.status != http.StatusGone || r.code(t) != "session_cancelled" {
		t.Fatalf("cancelled: %d %s", r.status, r.body)
	}
}
