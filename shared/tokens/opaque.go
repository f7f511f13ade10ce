package tokens

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
)

// OpaqueBytes is the entropy of an opaque token (the cross-device token): 256 bits.
const OpaqueBytes = 32

// NewOpaque makes a random 256-bit token (unpadded base64url, 43 characters) and its hash, the
// only form to store (DESIGN 4: cross-device token stored only as its SHA-256).
func NewOpaque() (token, hash string, err error) {
	var b [OpaqueBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	token = base64.RawURLEncoding.EncodeToString(b[:])
	return token, OpaqueHash(token), nil
}

// OpaqueHash is the lowercase hex SHA-256 of an opaque token, for storage and lookup. A plain
// hash suffices: the token has 256 random bits, so it cannot be guessed from its hash.
func OpaqueHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// OpaqueValid reports whether s has the shape NewOpaque produces (use before any lookup, so junk
// never reaches storage).
func OpaqueValid(s string) bool {
	if len(s) != base64.RawURLEncoding.EncodedLen(OpaqueBytes) {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	return err == nil && len(b) == OpaqueBytes
}

// OpaqueMatches compares a presented token with a stored hash in constant time.
func OpaqueMatches(token, storedHash string) bool {
	got := OpaqueHash(token)
	return subtle.ConstantTimeCompare([]byte(got), []byte(storedHash)) == 1
}
