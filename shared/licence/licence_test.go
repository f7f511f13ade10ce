package licence

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(t time.Time) Option { return WithClock(func() time.Time { return t }) }

func operator(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

func claims() Claims {
	return Claims{Issuer: "operator", ID: "lic-1", CustomerID: "cust-1", TenantID: "tid-1",
		Features: []Feature{FeatureEsign, FeatureDelivery}, IssuedAt: t0.Unix(), ExpiresAt: t0.Add(365 * 24 * time.Hour).Unix()}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindForbidden || e.Code != code {
		t.Fatalf("err = %v, want KindForbidden %s", err, code)
	}
}

func TestRequire(t *testing.T) {
	t.Parallel()
	pub, priv := operator(t)
	tok, err := Sign(priv, claims())
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(tok, pub, at(t0))
	if err != nil {
		t.Fatal(err)
	}
	if l.CustomerID != "cust-1" || l.TenantID != "tid-1" || l.ID != "lic-1" {
		t.Fatalf("claims %+v", l.Claims)
	}
	if err := l.Require(FeatureEsign); err != nil {
		t.Fatal(err)
	}
	err = l.Require(FeatureDispatch)
	wantCode(t, err, CodeFeatureMissing)
	if e, _ := apperr.As(err); !strings.Contains(e.Detail, "dispatch") || e.Extra["feature"] != "dispatch" {
		t.Fatalf("error does not name the feature: %+v", e)
	}
	if p := apperr.ProblemFor(err); p.Status != 403 {
		t.Fatalf("status %d", p.Status)
	}

	expired, err := Parse(tok, pub, at(t0.Add(366*24*time.Hour)))
	if err != nil {
		t.Fatalf("an expired licence must still parse: %v", err)
	}
	wantCode(t, expired.Require(FeatureEsign), CodeExpired)

	var none *Licence
	wantCode(t, none.Require(FeatureEsign), CodeMissing)

	if err := l.CheckTenant("tid-1"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, l.CheckTenant("tid-2"), CodeTenantMismatch)
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	pub, priv := operator(t)
	_, otherPriv := operator(t)
	good, _ := Sign(priv, claims())
	parts := strings.Split(good, ".")
	forged := claims()
	forged.Features = AllFeatures
	forgedPayload, _ := json.Marshal(forged)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	payload, _ := json.Marshal(claims())
	es256, _ := jws.Sign(payload, jws.WithKey(jwa.ES256, ec))
	hs256, _ := jws.Sign(payload, jws.WithKey(jwa.HS256, []byte(pub)))
	noneHdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`))
	noFeatures := claims()
	noFeatures.Features = nil
	noFeaturesTok := signRaw(t, priv, noFeatures)
	noCustomer := claims()
	noCustomer.CustomerID, noCustomer.TenantID = "", ""
	noCustomerTok := signRaw(t, priv, noCustomer)
	otherSigned, _ := Sign(otherPriv, claims())

	tests := map[string]string{
		"empty":              "",
		"garbage":            "x.y.z",
		"other key":          otherSigned,
		"tampered features":  parts[0] + "." + base64.RawURLEncoding.EncodeToString(forgedPayload) + "." + parts[2],
		"alg none":           noneHdr + "." + parts[1] + ".",
		"ES256":              string(es256),
		"HS256 with pub key": string(hs256),
		"no features":        noFeaturesTok,
		"no customer":        noCustomerTok,
		"too long":           good + strings.Repeat("A", MaxLicenceLen),
		"JSON serialisation": `{"payload":"` + parts[1] + `","signatures":[]}`,
	}
	for name, tok := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tok, pub, at(t0))
			wantCode(t, err, CodeInvalid)
		})
	}
}

// signRaw signs claims that Sign would refuse.
func signRaw(t *testing.T, priv ed25519.PrivateKey, c Claims) string {
	b, _ := json.Marshal(c)
	out, err := jws.Sign(b, jws.WithKey(jwa.EdDSA, priv))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestPublicKeyAndLoad(t *testing.T) {
	t.Parallel()
	pub, priv := operator(t)
	der, _ := x509.MarshalPKIXPublicKey(pub)
	pemText := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	for name, s := range map[string]string{
		"std":    base64.StdEncoding.EncodeToString(pub),
		"rawurl": base64.RawURLEncoding.EncodeToString(pub),
		"pem":    pemText,
	} {
		got, err := ParsePublicKey(s)
		if err != nil || !got.Equal(pub) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, bad := range []string{"", "abc", base64.StdEncoding.EncodeToString(make([]byte, 31)), "-----BEGIN FOO-----\n-----END FOO-----"} {
		if _, err := ParsePublicKey(bad); err == nil {
			t.Fatalf("ParsePublicKey(%q) accepted", bad)
		}
	}
	tok, _ := Sign(priv, claims())
	path := filepath.Join(t.TempDir(), "licence.jws")
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path, pub, at(t0))
	if err != nil || !l.Has(FeatureDelivery) {
		t.Fatalf("%v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none"), pub); err == nil {
		t.Fatal("missing file accepted")
	}
	if _, err := Sign(priv, Claims{ExpiresAt: 1}); err == nil {
		t.Fatal("Sign accepted claims without features")
	}
}
