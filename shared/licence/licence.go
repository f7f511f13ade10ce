// Package licence verifies the operator's signed licence offline: a compact JWS, algorithm EdDSA
// (Ed25519) only, whose payload lists the licensed features. Routes call Require(feature), or Allow(plan) with what a
// request will make (Plan).
//
// Payload (JSON):
//
//	{"iss":"<operator>","jti":"<licence id>","customerId":"<id>","tenantId":"<Entra tid, optional>",
//	 "features":["esign","dispatch","delivery","workflow"],"iat":<unix>,"exp":<unix>}
//
// Settings: LICENCE_FILE (a file holding the compact JWS) and LICENCE_PUBLIC_KEY (the operator's
// Ed25519 public key: base64 of the 32 raw bytes, or a PEM "PUBLIC KEY" block).
package licence

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/keyring"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// Feature is a licensed capability.
type Feature string

// Features.
const (
	FeatureEsign    Feature = "esign"
	FeatureDispatch Feature = "dispatch"
	FeatureDelivery Feature = "delivery"
	FeatureWorkflow Feature = "workflow"
)

// AllFeatures lists every feature this version knows.
var AllFeatures = []Feature{FeatureEsign, FeatureDispatch, FeatureDelivery, FeatureWorkflow}

// Stable error codes (KindForbidden: answered 403).
const (
	CodeMissing        = "licence_missing"
	CodeInvalid        = "licence_invalid"
	CodeExpired        = "licence_expired"
	CodeFeatureMissing = "licence_feature_missing"
	CodeTenantMismatch = "licence_tenant_mismatch"
)

// MaxLicenceLen bounds the licence text.
const MaxLicenceLen = 16 << 10

// Claims is the licence payload.
type Claims struct {
	Issuer     string    `json:"iss,omitempty"`
	ID         string    `json:"jti,omitempty"`
	CustomerID string    `json:"customerId,omitempty"`
	TenantID   string    `json:"tenantId,omitempty"`
	Features   []Feature `json:"features"`
	IssuedAt   int64     `json:"iat,omitempty"`
	ExpiresAt  int64     `json:"exp"`
}

// Licence is a verified licence. It may be expired: Require reports that per call, so an
// expired licence blocks routes without stopping the app.
type Licence struct {
	Claims
	now   func() time.Time
	token string // the compact JWS, sent to the licensing service (shared/licensing)
}

// Option configures Parse.
type Option func(*Licence)

// WithClock replaces time.Now for expiry checks (tests).
func WithClock(now func() time.Time) Option { return func(l *Licence) { l.now = now } }

// ParsePublicKey reads LICENCE_PUBLIC_KEY: base64 (standard or URL-safe) of the 32-byte
// Ed25519 public key, or a PEM PKIX "PUBLIC KEY" block. Errors are plain configuration errors.
func ParsePublicKey(setting string) (ed25519.PublicKey, error) {
	setting = strings.TrimSpace(setting)
	if strings.HasPrefix(setting, "-----BEGIN") {
		block, _ := pem.Decode([]byte(setting))
		if block == nil || block.Type != "PUBLIC KEY" {
			return nil, errors.New("LICENCE_PUBLIC_KEY: not a PEM PUBLIC KEY block")
		}
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("LICENCE_PUBLIC_KEY: %w", err)
		}
		pub, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, errors.New("LICENCE_PUBLIC_KEY: not an Ed25519 key")
		}
		return pub, nil
	}
	raw, err := keyring.DecodeBase64(setting)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New("LICENCE_PUBLIC_KEY: want base64 of a 32-byte Ed25519 public key")
	}
	return ed25519.PublicKey(raw), nil
}

// Load reads and verifies the licence file. Errors as Parse, plus a plain error when the file
// cannot be read.
func Load(path string, pub ed25519.PublicKey, opts ...Option) (*Licence, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("LICENCE_FILE: %w", err)
	}
	return Parse(string(b), pub, opts...)
}

// Parse verifies a compact JWS licence with the operator's key. Errors: *apperr.Error
// KindForbidden licence_invalid (malformed, alg other than EdDSA, bad signature, missing
// features, customer or exp). An expired licence is returned without error; see Require.
func Parse(token string, pub ed25519.PublicKey, opts ...Option) (*Licence, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, errors.New("licence: the operator's public key is not set")
	}
	token = strings.TrimSpace(token)
	if token == "" || len(token) > MaxLicenceLen || strings.Count(token, ".") != 2 {
		return nil, invalid("the licence is malformed")
	}
	msg, err := jws.ParseString(token)
	if err != nil || len(msg.Signatures()) != 1 {
		return nil, invalid("the licence is malformed")
	}
	h := msg.Signatures()[0].ProtectedHeaders()
	if h.Algorithm() != jwa.EdDSA {
		return nil, invalid("the licence algorithm must be EdDSA")
	}
	if len(h.Critical()) > 0 {
		return nil, invalid("the licence has critical headers this service does not support")
	}
	if _, has := h.Get("b64"); has {
		return nil, invalid("the licence is malformed")
	}
	payload, err := jws.Verify([]byte(token), jws.WithKey(jwa.EdDSA, pub))
	if err != nil {
		return nil, invalid("the licence signature does not verify against LICENCE_PUBLIC_KEY")
	}
	var c Claims
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&c); err != nil {
		return nil, invalid("the licence payload is malformed")
	}
	if c.ExpiresAt == 0 || len(c.Features) == 0 || (c.CustomerID == "" && c.TenantID == "") {
		return nil, invalid("the licence lacks exp, features or a customer")
	}
	l := &Licence{Claims: c, now: time.Now, token: token}
	for _, o := range opts {
		o(l)
	}
	return l, nil
}

// Sign makes a licence (the operator's tool and the dev setup). Error: claims without
// features, customer or expiry, or a signing failure.
func Sign(priv ed25519.PrivateKey, c Claims) (string, error) {
	if c.ExpiresAt == 0 || len(c.Features) == 0 || (c.CustomerID == "" && c.TenantID == "") {
		return "", errors.New("licence: claims need exp, features and a customer or tenant")
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	hdr := jws.NewHeaders()
	_ = hdr.Set(jws.TypeKey, "JWT")
	out, err := jws.Sign(payload, jws.WithKey(jwa.EdDSA, priv, jws.WithProtectedHeaders(hdr)))
	return string(out), err
}

// Token is the verified compact JWS the licence was parsed from ("" for a nil licence): the
// bearer token of the licensing service's calls (DESIGN 19). It is a credential: never log it.
func (l *Licence) Token() string {
	if l == nil {
		return ""
	}
	return l.token
}

// ExpiresTime is the expiry as a time.
func (l *Licence) ExpiresTime() time.Time { return time.Unix(l.ExpiresAt, 0).UTC() }

// Expired reports whether the licence has expired now.
func (l *Licence) Expired() bool { return !l.now().Before(l.ExpiresTime()) }

// Has reports whether the licence lists feature (regardless of expiry).
func (l *Licence) Has(f Feature) bool { return l != nil && slices.Contains(l.Features, f) }

// Require returns nil when the licence is current and lists every one of features (none: the
// licence need only be current). Errors (*apperr.Error, KindForbidden): licence_missing (nil
// licence), licence_expired, licence_feature_missing (naming the first missing feature, in the
// order given, in the detail and in the problem's `feature` member).
func (l *Licence) Require(features ...Feature) error {
	if l == nil {
		return apperr.New(apperr.KindForbidden, CodeMissing, "no licence is installed")
	}
	if l.Expired() {
		e := apperr.New(apperr.KindForbidden, CodeExpired, "the licence expired on %s",
			l.ExpiresTime().Format(time.DateOnly))
		e.Extra = map[string]any{"expiredAt": l.ExpiresTime().Format(time.RFC3339)}
		return e
	}
	for _, f := range features {
		if !l.Has(f) {
			e := apperr.New(apperr.KindForbidden, CodeFeatureMissing, "the licence does not include the %q feature", string(f))
			e.Extra = map[string]any{"feature": string(f)}
			return e
		}
	}
	return nil
}

// Plan is what one request makes, at once or later by itself (an auto-trigger after a render or
// a workflow's seal, a batch's deliveries), as far as the licence is concerned (DESIGN 14).
type Plan struct {
	Batch    bool // a batch of records: dispatch
	Workflow bool // a workflow
	ESign    bool // a signing session
	Delivery bool // delivery sessions (a render's or workflow's delivery, a batch's secure e-mail)
}

// Features lists the features p needs, in AllFeatures order: esign for a signing session,
// dispatch for a batch, delivery for deliveries, workflow for a workflow. A render that only
// renders needs none.
func (p Plan) Features() []Feature {
	var out []Feature
	for _, n := range []struct {
		need bool
		f    Feature
	}{{p.ESign, FeatureEsign}, {p.Batch, FeatureDispatch}, {p.Delivery, FeatureDelivery}, {p.Workflow, FeatureWorkflow}} {
		if n.need {
			out = append(out, n.f)
		}
	}
	return out
}

// Allow returns nil when the licence lets p be made: Require of p's features.
func (l *Licence) Allow(p Plan) error { return l.Require(p.Features()...) }

// CheckTenant returns nil when the licence is not bound to a tenant or is bound to tid.
// Error: KindForbidden licence_tenant_mismatch.
func (l *Licence) CheckTenant(tid string) error {
	if l == nil || l.TenantID == "" || l.TenantID == tid {
		return nil
	}
	return apperr.New(apperr.KindForbidden, CodeTenantMismatch, "the licence is not issued to this tenant")
}

func invalid(detail string) error {
	return apperr.New(apperr.KindForbidden, CodeInvalid, "%s", detail)
}
