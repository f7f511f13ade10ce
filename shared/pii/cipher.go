package pii

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/keyring"
)

// EncKeyLen is the AES-256 key length.
const EncKeyLen = 32

// CodeDecrypt is the stable code of a ciphertext that cannot be opened (wrong key, wrong AAD,
// tampered or malformed): KindInternal, since stored data the service wrote itself no longer
// matches; the caller logs it and answers generically.
const CodeDecrypt = "pii_decrypt_failed"

// CodeEncrypt is the internal problem of data that could not be encrypted.
const CodeEncrypt = "encrypt_failed"

const version = "v1"

// Cipher encrypts with the current key of its ring and decrypts with any. Safe for concurrent use.
type Cipher struct {
	ring  *keyring.Ring
	aeads map[string]cipher.AEAD
}

// ParseCipher reads the PII_ENC_KEYS setting: `kid1:base64key[,kid2:base64key]`, each key
// exactly 32 bytes, first one encrypts.
func ParseCipher(setting string) (*Cipher, error) {
	r, err := keyring.Parse(setting, EncKeyLen, EncKeyLen)
	if err != nil {
		return nil, fmt.Errorf("pii encryption keys: %w", err)
	}
	return NewCipher(r)
}

// NewCipher makes a Cipher over a ring of 32-byte keys.
func NewCipher(r *keyring.Ring) (*Cipher, error) {
	c := &Cipher{ring: r, aeads: map[string]cipher.AEAD{}}
	for _, id := range r.IDs() {
		key, _ := r.Lookup(id)
		if len(key) != EncKeyLen {
			return nil, fmt.Errorf("pii encryption key %q: must be exactly 32 bytes", id)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		c.aeads[id] = aead
	}
	return c, nil
}

// AAD binds a ciphertext to its row: each part is length-prefixed so that ("a|b","c") and
// ("a","b|c") differ. Pass e.g. AAD(groupID, strconv.Itoa(slotIndex), "email").
func AAD(parts ...string) []byte {
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(strconv.Itoa(len(p)))
		sb.WriteByte(':')
		sb.WriteString(p)
	}
	return []byte(sb.String())
}

// Encrypt seals plaintext under the current key: `v1.<kid>.<base64url(nonce|ciphertext|tag)>`
// (unpadded URL-safe base64, so the value is safe in table properties and URLs).
func (c *Cipher) Encrypt(plaintext, aad []byte) (string, error) {
	k := c.ring.Current()
	aead := c.aeads[k.ID]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := aead.Seal(nonce, nonce, plaintext, aad)
	return version + "." + k.ID + "." + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// EncryptString is Encrypt for text.
func (c *Cipher) EncryptString(plaintext string, aad []byte) (string, error) {
	return c.Encrypt([]byte(plaintext), aad)
}

// Decrypt opens a value made by Encrypt with the same AAD. Errors: *apperr.Error KindInternal
// code pii_decrypt_failed (malformed, unknown key id, wrong AAD, tampered); the detail names
// the cause class, never the data.
func (c *Cipher) Decrypt(ciphertext string, aad []byte) ([]byte, error) {
	ver, rest, ok1 := strings.Cut(ciphertext, ".")
	kid, body, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || ver != version {
		return nil, decryptErr("the ciphertext format is not recognised", nil)
	}
	aead, ok := c.aeads[kid]
	if !ok {
		return nil, decryptErr("the ciphertext's key id is not in the key ring", nil)
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(body)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, decryptErr("the ciphertext is malformed", nil)
	}
	pt, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], aad)
	if err != nil {
		return nil, decryptErr("the ciphertext does not authenticate (wrong key, row or tampered)", err)
	}
	return pt, nil
}

// DecryptString is Decrypt for text.
func (c *Cipher) DecryptString(ciphertext string, aad []byte) (string, error) {
	b, err := c.Decrypt(ciphertext, aad)
	return string(b), err
}

// KeyID returns the key id a ciphertext was made with, so a re-encryption job can find values
// under retired keys. Error: malformed value.
func KeyID(ciphertext string) (string, error) {
	parts := strings.SplitN(ciphertext, ".", 3)
	if len(parts) != 3 || parts[0] != version || !keyring.ValidID(parts[1]) {
		return "", errors.New("pii: not a v1 ciphertext")
	}
	return parts[1], nil
}

func decryptErr(detail string, cause error) error {
	return apperr.Wrap(cause, apperr.KindInternal, CodeDecrypt, "%s", detail)
}
