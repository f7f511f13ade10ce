package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/lestrrat-go/jwx/v2/jwk"
)

// MaxJWKSBytes bounds a JWKS document.
const MaxJWKSBytes = 1 << 20

// verKey is one usable verification key from a JWKS.
type verKey struct {
	alg string // the JWK's alg, "" when absent
	pub any    // *rsa.PublicKey or *ecdsa.PublicKey
}

type keyMap map[string]verKey

// parseJWKS keeps the keys that can verify one of the allowed algorithms: RSA (>= 2048 bits) and
// EC P-256 public keys with a kid, `use` absent or "sig". Others are skipped, not fatal: real
// JWKS documents carry encryption keys too. A document with no usable key is an error.
func parseJWKS(data []byte) (keyMap, error) {
	set, err := jwk.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	out := keyMap{}
	for i := 0; i < set.Len(); i++ {
		k, _ := set.Key(i)
		if k.KeyID() == "" || (k.KeyUsage() != "" && k.KeyUsage() != "sig") {
			continue
		}
		var raw any
		if err := k.Raw(&raw); err != nil {
			continue
		}
		pub, err := jwk.PublicRawKeyOf(raw)
		if err != nil {
			continue
		}
		switch p := pub.(type) {
		case *rsa.PublicKey:
			if p.N.BitLen() < 2048 {
				continue
			}
		case *ecdsa.PublicKey:
			if p.Curve != elliptic.P256() {
				continue
			}
		default:
			continue
		}
		alg := ""
		if k.Algorithm() != nil {
			alg = k.Algorithm().String()
		}
		out[k.KeyID()] = verKey{alg: alg, pub: pub}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("jwks: no usable signing key")
	}
	return out, nil
}

// keySource finds the key for a kid.
type keySource interface {
	key(ctx context.Context, kid string) (verKey, error)
}

// staticKeys is a JWKS read once from a file (development).
type staticKeys keyMap

func (s staticKeys) key(_ context.Context, kid string) (verKey, error) {
	k, ok := s[kid]
	if !ok {
		return verKey{}, invalid("the token's signing key is not known")
	}
	return k, nil
}

type keyState struct {
	keys    keyMap
	fetched time.Time
}

// remoteKeys is a JWKS fetched from a URL and cached. It refetches when the cache is older than
// maxAge or a token names an unknown kid (the issuer rotated), but never more often than once
// per minInterval; a failed refetch keeps the keys it had. Concurrent misses share one fetch.
type remoteKeys struct {
	url         string
	client      *http.Client
	timeout     time.Duration
	minInterval time.Duration
	maxAge      time.Duration
	now         func() time.Time

	state       atomic.Pointer[keyState]
	mu          sync.Mutex // held while fetching
	lastAttempt time.Time  // under mu
	fetches     atomic.Int64
}

func (r *remoteKeys) key(ctx context.Context, kid string) (verKey, error) {
	if st := r.state.Load(); st != nil && r.now().Sub(st.fetched) < r.maxAge {
		if k, ok := st.keys[kid]; ok {
			return k, nil
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state.Load()
	now := r.now()
	if st != nil {
		// Another request may have refreshed while this one waited.
		if k, ok := st.keys[kid]; ok && (now.Sub(st.fetched) < r.maxAge || now.Sub(r.lastAttempt) < r.minInterval) {
			return k, nil
		}
	}
	if !r.lastAttempt.IsZero() && now.Sub(r.lastAttempt) < r.minInterval {
		return r.fallback(st, kid)
	}
	r.lastAttempt = now
	keys, err := r.fetch(ctx)
	if err != nil {
		if st == nil {
			return verKey{}, apperr.Wrap(err, apperr.KindUnavailable, CodeKeysUnavailable,
				"the identity provider's signing keys cannot be fetched")
		}
		return r.fallback(st, kid)
	}
	r.state.Store(&keyState{keys: keys, fetched: now})
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	return verKey{}, invalid("the token's signing key is not known")
}

// fallback answers from the cached keys, stale or not, when a fetch is not allowed or failed.
func (r *remoteKeys) fallback(st *keyState, kid string) (verKey, error) {
	if st == nil {
		return verKey{}, apperr.New(apperr.KindUnavailable, CodeKeysUnavailable,
			"the identity provider's signing keys cannot be fetched")
	}
	if k, ok := st.keys[kid]; ok {
		return k, nil
	}
	return verKey{}, invalid("the token's signing key is not known")
}

func (r *remoteKeys) fetch(ctx context.Context) (keyMap, error) {
	r.fetches.Add(1)
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jwks fetch: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks fetch: status %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("jwks fetch: %w", err)
	}
	if len(data) > MaxJWKSBytes {
		return nil, fmt.Errorf("jwks fetch: document larger than %d bytes", MaxJWKSBytes)
	}
	return parseJWKS(data)
}
