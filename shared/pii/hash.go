// Package pii protects personal data: keyed hashes for lookups and audit (e-mail, OTP codes),
// AES-256-GCM encryption with a key id and row-bound AAD for display copies, and masking for
// evidence. Nothing here logs, and no error carries the data it was given.
package pii

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/esign-svc/esign/shared/keyring"
)

// MinHashKeyLen is the minimum HMAC key length in bytes.
const MinHashKeyLen = 32

// Hasher computes keyed hashes (HMAC-SHA256) under one dedicated key. Safe for concurrent use.
type Hasher struct{ key []byte }

// NewHasher makes a Hasher. Error: a key shorter than 32 bytes.
func NewHasher(key []byte) (*Hasher, error) {
	if len(key) < MinHashKeyLen {
		return nil, errors.New("pii: hash key must be at least 32 bytes")
	}
	return &Hasher{key: append([]byte(nil), key...)}, nil
}

// ParseHashKey reads the PII_HASH_KEY setting: base64 (standard or URL-safe) of at least 32 bytes.
func ParseHashKey(setting string) (*Hasher, error) {
	key, err := keyring.DecodeBase64(setting)
	if err != nil {
		return nil, errors.New("pii: hash key is not valid base64")
	}
	return NewHasher(key)
}

// NormaliseEmail trims spaces and lowercases the whole address, so that the same mailbox always
// hashes the same. (Lowercasing the local part is a deliberate choice: real providers treat it
// case-insensitively and a user expects "John@X.com" and "john@x.com" to be one signer.)
func NormaliseEmail(email string) string {
	return strings.ToLower(strings.TrimSpace(email))
}

// Email is the lowercase hex HMAC-SHA256 of the normalised address, for audit and lookups.
func (h *Hasher) Email(email string) string {
	return h.Hash("email", NormaliseEmail(email))
}

// Hash is the lowercase hex HMAC-SHA256 of value under the hasher's key, domain-separated by
// purpose (e.g. "otp", "email"), so a hash made for one purpose never matches another's.
// For OTP codes bind the value to its context, e.g. Hash("otp", groupId+"|"+slot+"|"+code).
func (h *Hasher) Hash(purpose, value string) string {
	return Hash(h.key, purpose, value)
}

// Hash is HMAC-SHA256(key, purpose || 0x00 || value) in lowercase hex.
func Hash(key []byte, purpose, value string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(purpose))
	mac.Write([]byte{0})
	mac.Write([]byte(value))
	return hex.EncodeToString(mac.Sum(nil))
}

// Matches reports in constant time whether value hashes (under purpose) to stored.
func (h *Hasher) Matches(purpose, value, stored string) bool {
	return Equal(h.Hash(purpose, value), stored)
}

// Equal compares two hashes in constant time.
func Equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
