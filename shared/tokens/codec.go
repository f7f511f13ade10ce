// Package tokens issues and verifies the service's own bearer tokens: the portal slot token, the
// portal access token, the delivery access token and the workflow portal token. All are JWS
// HS256 with a `kid` header naming a key of a rotating KeyRing, and a `pur` (purpose) claim that
// fixes the token's kind, so one kind can never be accepted as another.
//
// Verification failures are *apperr.Error of KindUnauthenticated with code token_invalid,
// token_expired or token_wrong_kind. Single use (the slot token's jti), revocation and
// cross-device generations are checked by the caller against storage.
package tokens

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/esign-svc/esign/shared/keyring"
)

// MinKeyLen is the minimum HS256 key length in bytes.
const MinKeyLen = 32

// DefaultLeeway is the clock skew tolerated on exp, nbf and iat.
const DefaultLeeway = 30 * time.Second

// KeyRing holds the HS256 keys: the first signs, all verify.
type KeyRing = keyring.Ring

// ParseKeyRing reads the TOKEN_KEYS setting: `kid1:base64key,kid2:base64key`, keys of at least
// 32 bytes, first one signs. The error names the entry at fault, never key material.
func ParseKeyRing(setting string) (*KeyRing, error) {
	r, err := keyring.Parse(setting, MinKeyLen, 0)
	if err != nil {
		return nil, fmt.Errorf("token keys: %w", err)
	}
	return r, nil
}

// Codec issues and verifies tokens. It is safe for concurrent use.
type Codec struct {
	ring   *KeyRing
	now    func() time.Time
	leeway time.Duration
}

// Option configures a Codec.
type Option func(*Codec)

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(c *Codec) { c.now = now } }

// WithLeeway sets the tolerated clock skew (default 30 s; negative values count as zero).
func WithLeeway(d time.Duration) Option {
	return func(c *Codec) { c.leeway = max(d, 0) }
}

// NewCodec makes a Codec over ring. It panics on a nil ring (a wiring error).
func NewCodec(ring *KeyRing, opts ...Option) *Codec {
	if ring == nil {
		panic("tokens: nil key ring")
	}
	c := &Codec{ring: ring, now: time.Now, leeway: DefaultLeeway}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Purpose values of the `pur` claim.
const (
	PurposeSlot           = "esign.slot"
	PurposePortalAccess   = "esign.portal_access"
	PurposeDelivery       = "delivery.access"
	PurposeWorkflowPortal = "workflow.portal"
)

// registered are the claims every token carries.
type registered struct {
	Purpose   string `json:"pur"`
	ID        string `json:"jti,omitempty"`
	IssuedAt  int64  `json:"iat"`
	NotBefore int64  `json:"nbf,omitempty"`
	ExpiresAt int64  `json:"exp"`
}

func (r *registered) reg() *registered { return r }

type claimSet interface{ reg() *registered }

// issue stamps iat (unless the claims carry one already) and signs claims with the current key.
func (c *Codec) issue(claims claimSet, purpose string, exp time.Time) (string, error) {
	now := c.now()
	if !exp.After(now) {
		return "", errors.New("tokens: expiry must be in the future")
	}
	r := claims.reg()
	r.Purpose = purpose
	if r.IssuedAt == 0 {
		r.IssuedAt = now.Unix()
	}
	r.ExpiresAt = exp.Unix()
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("tokens: encode claims: %w", err)
	}
	k := c.ring.Current()
	return signCompact(k.ID, k.Secret, payload)
}

// verify checks signature, purpose and times, and decodes the claims into dst.
func (c *Codec) verify(token, purpose string, dst claimSet) error {
	payload, err := verifyCompact(token, c.ring.Lookup)
	if err != nil {
		return err
	}
	var probe struct {
		Purpose string `json:"pur"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		return invalid("the token payload is malformed")
	}
	if probe.Purpose != purpose {
		return wrongKind()
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return invalid("the token payload is malformed")
	}
	r := dst.reg()
	now := c.now().Unix()
	lee := int64(c.leeway / time.Second)
	switch {
	case r.ExpiresAt == 0 || r.IssuedAt == 0:
		return invalid("the token lacks its time claims")
	case now > r.ExpiresAt+lee:
		return expired()
	case r.NotBefore != 0 && now+lee < r.NotBefore:
		return invalid("the token is not yet valid")
	case now+lee < r.IssuedAt:
		return invalid("the token was issued in the future")
	}
	return nil
}
