package tokens

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/keyring"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func secret(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func ring(t testing.TB, keys ...keyring.Key) *KeyRing {
	t.Helper()
	r, err := ParseKeyRing(keyring.Format(keys...))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func codecAt(t testing.TB, now time.Time, keys ...keyring.Key) *Codec {
	if len(keys) == 0 {
		keys = []keyring.Key{{ID: "k1", Secret: secret(1)}}
	}
	return NewCodec(ring(t, keys...), WithClock(func() time.Time { return now }))
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindUnauthenticated || e.Code != code {
		t.Fatalf("err = %v, want KindUnauthenticated %s", err, code)
	}
}

// forge builds a compact token from raw parts, for attack cases.
func forge(hdr, payload any, key []byte) string {
	h, _ := json.Marshal(hdr)
	p, _ := json.Marshal(payload)
	in := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(in))
	return in + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	c := codecAt(t, t0)
	sessExp := t0.Add(2 * time.Hour)

	tok, s, err := c.IssueSlot(Slot{GroupID: "g1", SlotIndex: 2, ExpiresAt: sessExp})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.VerifySlot(tok)
	if err != nil {
		t.Fatal(err)
	}
	if got != s || got.ID == "" || got.GroupID != "g1" || got.SlotIndex != 2 || !got.ExpiresAt.Equal(sessExp) {
		t.Fatalf("slot = %+v, issued %+v", got, s)
	}

	tok, pa, err := c.IssuePortalAccess(PortalAccess{GroupID: "g1", SlotIndex: 0, SessionID: "s1",
		DeviceID: "d1", Generation: 3, SessionExpiresAt: sessExp})
	if err != nil {
		t.Fatal(err)
	}
	gotPA, err := c.VerifyPortalAccess(tok)
	if err != nil {
		t.Fatal(err)
	}
	if gotPA != pa || gotPA.Generation != 3 || gotPA.DeviceID != "d1" || !gotPA.ExpiresAt.Equal(t0.Add(PortalAccessTTL)) {
		t.Fatalf("portal = %+v, issued %+v", gotPA, pa)
	}

	tok, err = c.IssueDelivery(Delivery{DeliveryID: "d-9", ExpiresAt: t0.Add(168 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.VerifyDelivery(tok)
	if err != nil || d.DeliveryID != "d-9" || !d.ExpiresAt.Equal(t0.Add(168*time.Hour)) {
		t.Fatalf("delivery = %+v, %v", d, err)
	}

	tok, w, err := c.IssueWorkflowPortal(WorkflowPortal{WorkflowID: "w1", Participant: "p1", Role: RoleReviewer})
	if err != nil {
		t.Fatal(err)
	}
	gotW, err := c.VerifyWorkflowPortal(tok)
	if err != nil || gotW != w || !gotW.ExpiresAt.Equal(t0.Add(4*time.Hour)) {
		t.Fatalf("workflow = %+v (issued %+v), %v", gotW, w, err)
	}
}

func TestPortalAccessCappedAtSession(t *testing.T) {
	t.Parallel()
	c := codecAt(t, t0)
	sessExp := t0.Add(10 * time.Minute)
	tok, pa, err := c.IssuePortalAccess(PortalAccess{GroupID: "g", SessionID: "s", SessionExpiresAt: sessExp})
	if err != nil {
		t.Fatal(err)
	}
	if !pa.ExpiresAt.Equal(sessExp) {
		t.Fatalf("exp = %v, want session expiry %v", pa.ExpiresAt, sessExp)
	}
	// Sliding: 25 minutes later, re-issuing from the verified claims still stops at the session.
	later := codecAt(t, t0.Add(9*time.Minute))
	cur, err := later.VerifyPortalAccess(tok)
	if err != nil {
		t.Fatal(err)
	}
	_, again, err := later.IssuePortalAccess(cur)
	if err != nil || !again.ExpiresAt.Equal(sessExp) {
		t.Fatalf("re-issued exp = %v, %v", again.ExpiresAt, err)
	}
	if _, _, err := codecAt(t, t0.Add(11*time.Minute)).IssuePortalAccess(cur); err == nil {
		t.Fatal("issued beyond the session's expiry")
	}
}

func TestWrongKind(t *testing.T) {
	t.Parallel()
	c := codecAt(t, t0)
	exp := t0.Add(time.Hour)
	slot, _, _ := c.IssueSlot(Slot{GroupID: "g", ExpiresAt: exp})
	portal, _, _ := c.IssuePortalAccess(PortalAccess{GroupID: "g", SessionID: "s", SessionExpiresAt: exp})
	deliv, _ := c.IssueDelivery(Delivery{DeliveryID: "d", ExpiresAt: exp})
	wf, _, _ := c.IssueWorkflowPortal(WorkflowPortal{WorkflowID: "w", Participant: "p", Role: RoleParticipant})
	toks := map[string]string{"slot": slot, "portal": portal, "delivery": deliv, "workflow": wf}
	verifiers := map[string]func(string) error{
		"slot":     func(s string) error { _, err := c.VerifySlot(s); return err },
		"portal":   func(s string) error { _, err := c.VerifyPortalAccess(s); return err },
		"delivery": func(s string) error { _, err := c.VerifyDelivery(s); return err },
		"workflow": func(s string) error { _, err := c.VerifyWorkflowPortal(s); return err },
	}
	for tn, tok := range toks {
		for vn, verify := range verifiers {
			t.Run(tn+" as "+vn, func(t *testing.T) {
				t.Parallel()
				err := verify(tok)
				if tn == vn {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				wantCode(t, err, CodeWrongKind)
			})
		}
	}
}

func TestRotation(t *testing.T) {
	t.Parallel()
	old := keyring.Key{ID: "old", Secret: secret(1)}
	cur := keyring.Key{ID: "new", Secret: secret(2)}
	tokOld, err := codecAt(t, t0, old).IssueDelivery(Delivery{DeliveryID: "d", ExpiresAt: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	rotated := codecAt(t, t0, cur, old)
	if _, err := rotated.VerifyDelivery(tokOld); err != nil {
		t.Fatalf("old-key token refused after rotation: %v", err)
	}
	tokNew, _ := rotated.IssueDelivery(Delivery{DeliveryID: "d", ExpiresAt: t0.Add(time.Hour)})
	if !strings.Contains(headerOf(t, tokNew), `"kid":"new"`) {
		t.Fatalf("new token not signed with the first key: %s", headerOf(t, tokNew))
	}
	_, err = codecAt(t, t0, cur).VerifyDelivery(tokOld)
	wantCode(t, err, CodeInvalid)
	// Same kid, different secret: signature fails.
	_, err = codecAt(t, t0, keyring.Key{ID: "old", Secret: secret(9)}).VerifyDelivery(tokOld)
	wantCode(t, err, CodeInvalid)
}

// A delivery token issued at a given time is the same token whenever it is issued (a repeated
// delivery create answers the same links); without one it carries the codec's time.
func TestDeliveryIssuedAt(t *testing.T) {
	t.Parallel()
	d := Delivery{DeliveryID: "d", ExpiresAt: t0.Add(time.Hour), IssuedAt: t0}
	a, err := codecAt(t, t0).IssueDelivery(d)
	if err != nil {
		t.Fatal(err)
	}
	b, err := codecAt(t, t0.Add(time.Minute)).IssueDelivery(d)
	if err != nil || a != b {
		t.Fatalf("issued at t0, later: %q, first: %q (%v)", b, a, err)
	}
	if _, err := codecAt(t, t0.Add(time.Minute)).VerifyDelivery(a); err != nil {
		t.Fatal(err)
	}
	d.IssuedAt = time.Time{}
	c, _ := codecAt(t, t0.Add(time.Minute)).IssueDelivery(d)
	if c == a {
		t.Fatal("a token without IssuedAt did not take the codec's time")
	}
}

func headerOf(t *testing.T, tok string) string {
	h, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

func TestTimes(t *testing.T) {
	t.Parallel()
	issuer := codecAt(t, t0)
	tok, _ := issuer.IssueDelivery(Delivery{DeliveryID: "d", ExpiresAt: t0.Add(time.Hour)})
	tests := []struct {
		name string
		now  time.Time
		code string
	}{
		{"fresh", t0, ""},
		{"at expiry", t0.Add(time.Hour), ""},
		{"within leeway", t0.Add(time.Hour + 29*time.Second), ""},
		{"past leeway", t0.Add(time.Hour + 31*time.Second), CodeExpired},
		{"issued in the future (clock skew within leeway)", t0.Add(-20 * time.Second), ""},
		{"issued in the future", t0.Add(-2 * time.Minute), CodeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := codecAt(t, tc.now).VerifyDelivery(tok)
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, tc.code)
		})
	}
}

func TestForgedAndMalformed(t *testing.T) {
	t.Parallel()
	c := codecAt(t, t0)
	key := secret(1)
	good := map[string]any{"pur": PurposeDelivery, "did": "d", "iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix()}
	hdr := map[string]any{"alg": "HS256", "kid": "k1", "typ": "JWT"}
	valid := forge(hdr, good, key)
	if _, err := c.VerifyDelivery(valid); err != nil {
		t.Fatalf("forged-with-the-right-key token should verify: %v", err)
	}
	parts := strings.Split(valid, ".")
	with := func(m map[string]any, k string, v any) map[string]any {
		out := map[string]any{}
		for kk, vv := range m {
			out[kk] = vv
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	tampered, _ := json.Marshal(with(good, "did", "other"))
	tests := []struct {
		name string
		tok  string
	}{
		{"empty", ""},
		{"alg none", forge(with(hdr, "alg", "none"), good, key)},
		{"alg none no sig", strings.Join(parts[:2], ".") + "."},
		{"alg RS256", forge(with(hdr, "alg", "RS256"), good, key)},
		{"alg hs256 lowercase", forge(with(hdr, "alg", "hs256"), good, key)},
		{"alg HS512", forge(with(hdr, "alg", "HS512"), good, key)},
		{"no kid", forge(with(hdr, "kid", nil), good, key)},
		{"unknown kid", forge(with(hdr, "kid", "k2"), good, key)},
		{"extra header jku", forge(with(hdr, "jku", "https://evil"), good, key)},
		{"crit header", forge(with(hdr, "crit", []string{"b64"}), good, key)},
		{"typ other", forge(with(hdr, "typ", "at+jwt"), good, key)},
		{"wrong key", forge(hdr, good, secret(2))},
		{"tampered payload", parts[0] + "." + base64.RawURLEncoding.EncodeToString(tampered) + "." + parts[2]},
		{"truncated signature", valid[:len(valid)-2]},
		{"padded signature", valid + "="},
		{"four segments", valid + ".x"},
		{"two segments", parts[0] + "." + parts[1]},
		{"empty payload", parts[0] + ".." + parts[2]},
		{"std base64 header", strings.NewReplacer("-", "+", "_", "/").Replace(parts[0]) + "+." + parts[1] + "." + parts[2]},
		{"whitespace", " " + valid},
		{"no exp", forge(hdr, with(good, "exp", nil), key)},
		{"no iat", forge(hdr, with(good, "iat", nil), key)},
		{"nbf future", forge(hdr, with(good, "nbf", t0.Add(time.Hour).Unix()), key)},
		{"unknown claim", forge(hdr, with(good, "admin", true), key)},
		{"exp as string", forge(hdr, with(good, "exp", "tomorrow"), key)},
		{"empty delivery id", forge(hdr, with(good, "did", ""), key)},
		{"payload not object", forge(hdr, []int{1}, key)},
		{"too long", forge(hdr, with(good, "did", strings.Repeat("a", MaxTokenLen)), key)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.VerifyDelivery(tc.tok)
			wantCode(t, err, CodeInvalid)
			if strings.Contains(err.Error(), parts[1]) {
				t.Fatal("error detail contains the token")
			}
		})
	}
	// A missing purpose is a wrong kind, not a pass.
	_, err := c.VerifyDelivery(forge(hdr, with(good, "pur", nil), key))
	wantCode(t, err, CodeWrongKind)
}

func TestIssueRejectsBadClaims(t *testing.T) {
	t.Parallel()
	c := codecAt(t, t0)
	future := t0.Add(time.Hour)
	cases := map[string]func() error{
		"slot no group": func() error { _, _, err := c.IssueSlot(Slot{ExpiresAt: future}); return err },
		"slot negative": func() error {
			_, _, err := c.IssueSlot(Slot{GroupID: "g", SlotIndex: -1, ExpiresAt: future})
			return err
		},
		"slot past": func() error { _, _, err := c.IssueSlot(Slot{GroupID: "g", ExpiresAt: t0}); return err },
		"portal no session": func() error {
			_, _, err := c.IssuePortalAccess(PortalAccess{GroupID: "g", SessionExpiresAt: future})
			return err
		},
		"delivery no id": func() error { _, err := c.IssueDelivery(Delivery{ExpiresAt: future}); return err },
		"workflow bad role": func() error {
			_, _, err := c.IssueWorkflowPortal(WorkflowPortal{WorkflowID: "w", Participant: "p", Role: "admin"})
			return err
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err := f(); err == nil {
				t.Fatal("issued a token with bad claims")
			}
		})
	}
}

func TestOpaque(t *testing.T) {
	t.Parallel()
	tok, hash, err := NewOpaque()
	if err != nil {
		t.Fatal(err)
	}
	tok2, _, _ := NewOpaque()
	if tok == tok2 {
		t.Fatal("two opaque tokens are equal")
	}
	if !OpaqueValid(tok) || len(hash) != 64 || strings.Contains(hash, tok) {
		t.Fatalf("token %d chars valid=%v hash %q", len(tok), OpaqueValid(tok), hash)
	}
	if !OpaqueMatches(tok, hash) || OpaqueMatches(tok2, hash) {
		t.Fatal("OpaqueMatches wrong")
	}
	for _, bad := range []string{"", tok[:42], tok + "A", strings.Repeat("*", 43)} {
		if OpaqueValid(bad) {
			t.Fatalf("OpaqueValid(%q) = true", bad)
		}
	}
}

func TestParseKeyRingRejectsShortKeys(t *testing.T) {
	t.Parallel()
	_, err := ParseKeyRing("k1:" + base64.StdEncoding.EncodeToString(make([]byte, 31)))
	if err == nil {
		t.Fatal("accepted a 31-byte key")
	}
}

func BenchmarkVerifyPortalAccess(b *testing.B) {
	c := codecAt(b, t0)
	tok, _, _ := c.IssuePortalAccess(PortalAccess{GroupID: "g", SessionID: "s", SessionExpiresAt: t0.Add(time.Hour)})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.VerifyPortalAccess(tok); err != nil {
			b.Fatal(err)
		}
	}
}
