// Package keyring parses the key-ring settings shared by the token and personal-data crypto:
// a comma-separated list of `kid:base64key` entries. The first entry is the current key (it
// signs or encrypts); every entry verifies or decrypts, so keys can rotate without breaking
// what the previous key produced.
//
// Setting format (TOKEN_KEYS, PII_ENC_KEYS):
//
//	kid1:base64key[,kid2:base64key...]
//
// kid: 1 to 64 characters of [A-Za-z0-9._-]; key: standard or URL-safe base64, padded or not.
// Spaces around entries are ignored. Key ids must be unique.
package keyring

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Key is one named secret.
type Key struct {
	ID     string
	Secret []byte
}

// Ring is an ordered set of keys; the first is current. It is immutable after construction and
// safe for concurrent use.
type Ring struct {
	keys []Key
	byID map[string][]byte
}

// MaxKeys bounds a ring; more entries than this in a setting are refused.
const MaxKeys = 16

// New builds a ring from keys, the first being current. Each secret must be at least minLen
// bytes (and exactly exactLen bytes when exactLen > 0). It copies the secrets.
// Errors are plain (configuration errors, reported at start): empty ring, bad id, duplicate id,
// wrong key length.
func New(minLen, exactLen int, keys ...Key) (*Ring, error) {
	if len(keys) == 0 {
		return nil, errors.New("key ring is empty")
	}
	if len(keys) > MaxKeys {
		return nil, fmt.Errorf("key ring has %d keys, at most %d allowed", len(keys), MaxKeys)
	}
	r := &Ring{byID: make(map[string][]byte, len(keys))}
	for i, k := range keys {
		if !ValidID(k.ID) {
			return nil, fmt.Errorf("key %d: key id must be 1-64 characters of A-Z a-z 0-9 . _ -", i+1)
		}
		if _, dup := r.byID[k.ID]; dup {
			return nil, fmt.Errorf("key %d: duplicate key id %q", i+1, k.ID)
		}
		if exactLen > 0 && len(k.Secret) != exactLen {
			return nil, fmt.Errorf("key %q: must be exactly %d bytes, got %d", k.ID, exactLen, len(k.Secret))
		}
		if len(k.Secret) < minLen {
			return nil, fmt.Errorf("key %q: must be at least %d bytes, got %d", k.ID, minLen, len(k.Secret))
		}
		secret := append([]byte(nil), k.Secret...)
		r.keys = append(r.keys, Key{ID: k.ID, Secret: secret})
		r.byID[k.ID] = secret
	}
	return r, nil
}

// Parse reads a ring from its setting text (see the package doc). The errors name the entry at
// fault but never include key material.
func Parse(setting string, minLen, exactLen int) (*Ring, error) {
	setting = strings.TrimSpace(setting)
	if setting == "" {
		return nil, errors.New("key ring setting is empty")
	}
	parts := strings.Split(setting, ",")
	keys := make([]Key, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		id, enc, ok := strings.Cut(p, ":")
		if !ok {
			return nil, fmt.Errorf("entry %d: want kid:base64key", i+1)
		}
		secret, err := DecodeBase64(enc)
		if err != nil {
			return nil, fmt.Errorf("entry %d (%q): key is not valid base64", i+1, id)
		}
		keys = append(keys, Key{ID: id, Secret: secret})
	}
	return New(minLen, exactLen, keys...)
}

// Current is the key that signs or encrypts.
func (r *Ring) Current() Key { return r.keys[0] }

// Lookup returns the secret for a key id.
func (r *Ring) Lookup(id string) ([]byte, bool) {
	s, ok := r.byID[id]
	return s, ok
}

// IDs lists the key ids, current first.
func (r *Ring) IDs() []string {
	ids := make([]string, len(r.keys))
	for i, k := range r.keys {
		ids[i] = k.ID
	}
	return ids
}

// Format writes keys back into setting text (used by the dev setup).
func Format(keys ...Key) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.ID + ":" + base64.StdEncoding.EncodeToString(k.Secret)
	}
	return strings.Join(parts, ",")
}

// ValidID reports whether s is an acceptable key id.
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// DecodeBase64 accepts standard or URL-safe base64, with or without padding.
func DecodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty")
	}
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}
