package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// es256 signs in (the JWS signing input) as ES256: r and s, 32 bytes each.
func es256(tb testing.TB, k *ecdsa.PrivateKey, in string) []byte {
	h := sha256.Sum256([]byte(in))
	r, s, err := ecdsa.Sign(rand.Reader, k, h[:])
	if err != nil {
		tb.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return sig
}

// FuzzVerify: any header and payload, signed by the known ES256 key or not, give a principal
// or a 401 auth_invalid/auth_required; a token it takes was signed by the key it names with an
// allowed algorithm, and carries the issuer, the audience, an expiry still valid, a tenant and
// the principal's claims exactly as the payload has them.
func FuzzVerify(f *testing.F) {
	a, _, ec := keys(f)
	file := filepath.Join(f.TempDir(), "jwks.json")
	if err := os.WriteFile(file, jwksOf(f, a, ec), 0o600); err != nil {
		f.Fatal(err)
	}
	v, err := NewVerifier(Config{Issuer: issuer, Audience: audience, JWKSFile: file, Now: func() time.Time { return t0 }})
	if err != nil {
		f.Fatal(err)
	}
	js := func(x any) []byte { b, _ := json.Marshal(x); return b }
	hdr := js(map[string]any{"alg": "ES256", "kid": "kid-ec", "typ": "JWT"})
	good := js(goodClaims())
	goodIn := base64.RawURLEncoding.EncodeToString(hdr) + "." + base64.RawURLEncoding.EncodeToString(good)
	if _, err := v.Verify(context.Background(), goodIn+"."+base64.RawURLEncoding.EncodeToString(es256(f, ecK, goodIn))); err != nil {
		f.Fatalf("the good seed is refused, so no property of a taken token is checked: %v", err)
	}
	f.Add(hdr, good, uint8(0))
	f.Add(hdr, js(goodClaims().with("aud", []string{"x", audience}).with("email", "ada@example.com")), uint8(0))
	f.Add(hdr, js(goodClaims().with("exp", t0.Add(-2*time.Minute).Unix())), uint8(0))
	f.Add(hdr, js(goodClaims().with("exp", nil)), uint8(0))
	f.Add(hdr, js(goodClaims().with("tid", 7)), uint8(0))
	f.Add(hdr, js(goodClaims().with("roles", "Service.Admin")), uint8(0))
	f.Add(hdr, js(goodClaims().with("exp", 1e300)), uint8(0))
	f.Add(hdr, []byte(`{"iss":"`+issuer+`","aud":"`+audience+`","exp":1772370000,"tid":"t","tid":"u"}`), uint8(0))
	f.Add(js(map[string]any{"alg": "none", "kid": "kid-ec"}), good, uint8(1))
	f.Add(js(map[string]any{"alg": "HS256", "kid": "kid-a"}), good, uint8(1))
	f.Add(js(map[string]any{"alg": "RS256", "kid": "kid-ec"}), good, uint8(0))
	f.Add(js(map[string]any{"alg": "ES256", "kid": "kid-ec", "crit": []string{"exp"}}), good, uint8(0))
	f.Add(js(map[string]any{"alg": "ES256", "kid": "kid-ec", "b64": false}), good, uint8(0))
	f.Add(js(map[string]any{"alg": "ES256", "kid": "nope"}), good, uint8(0))
	f.Add(hdr, good, uint8(2))
	f.Add([]byte("{"), []byte("x"), uint8(3))
	f.Fuzz(func(t *testing.T, h, p []byte, mode uint8) {
		in := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p)
		var raw string
		switch mode % 4 {
		case 0: // signed by the key of kid-ec
			raw = in + "." + base64.RawURLEncoding.EncodeToString(es256(t, ecK, in))
		case 1: // unsigned
			raw = in + "."
		case 2: // a signature of something else
			raw = in + "." + base64.RawURLEncoding.EncodeToString(es256(t, ecK, in+"x"))
		case 3: // the bytes themselves as the token
			raw = string(h) + "." + string(p)
		}
		pr, err := v.Verify(context.Background(), raw)
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindUnauthenticated || (e.Code != CodeInvalid && e.Code != CodeRequired) || e.Kind.Status() != 401 {
				t.Fatalf("err = %#v", err)
			}
			if len(p) >= 8 && strings.Contains(e.Detail, string(p)) {
				t.Fatalf("the detail shows the payload: %q", e.Detail)
			}
			return
		}
		if mode%4 != 0 {
			t.Fatalf("took a token not signed by its key (mode %d): %q", mode%4, raw)
		}
		var head struct {
			Alg, Kid string
			Crit     any
		}
		if json.Unmarshal(h, &head) != nil || head.Alg != "ES256" || head.Kid != "kid-ec" || head.Crit != nil {
			t.Fatalf("took header %s", h)
		}
		var c map[string]any
		if json.Unmarshal(p, &c) != nil {
			t.Fatalf("took payload %s that is no JSON object", p)
		}
		if c["iss"] != issuer {
			t.Fatalf("took iss %v", c["iss"])
		}
		switch aud := c["aud"].(type) {
		case string:
			if aud != audience {
				t.Fatalf("took aud %q", aud)
			}
		case []any:
			if !slices.Contains(aud, any(audience)) {
				t.Fatalf("took aud %v", aud)
			}
		default:
			t.Fatalf("took aud %v", c["aud"])
		}
		exp, ok := c["exp"].(float64)
		if !ok || exp < float64(t0.Add(-DefaultLeeway).Unix()) {
			t.Fatalf("took exp %v at %d", c["exp"], t0.Unix())
		}
		if nbf, ok := c["nbf"].(float64); ok && nbf > float64(t0.Add(DefaultLeeway).Unix()) && !math.IsInf(nbf, 0) {
			t.Fatalf("took nbf %v at %d", nbf, t0.Unix())
		}
		if tid, _ := c["tid"].(string); pr.TenantID == "" || pr.TenantID != tid {
			t.Fatalf("tenant %q from tid %v", pr.TenantID, c["tid"])
		}
		if sub, _ := c["sub"].(string); pr.Subject != sub {
			t.Fatalf("subject %q from sub %v", pr.Subject, c["sub"])
		}
		var roles []string
		if r, ok := c["roles"].([]any); ok {
			for _, x := range r {
				roles = append(roles, x.(string))
			}
		}
		if !slices.Equal(pr.Roles, roles) {
			t.Fatalf("roles %v from %v", pr.Roles, c["roles"])
		}
	})
}
