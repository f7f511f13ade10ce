package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers (https://www.standardwebhooks.com, DESIGN 17): a request whose
// Request.Secrets is set carries them instead of X-Esign-Signature.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
	// SecretPrefix starts a Standard Webhooks secret; base64 of the key follows.
	SecretPrefix = "whsec_"
	// SecretBytes is the length of a key NewSecret makes.
	SecretBytes = 32
	// Tolerance is how far a webhook-timestamp may be from the receiver's clock.
	Tolerance = 5 * time.Minute
)

// ErrBadSignature is VerifyStandard's error for a request no secret signed (or signed too long
// ago, or with malformed headers).
var ErrBadSignature = errors.New("webhook: no valid signature")

// NewSecret makes a Standard Webhooks secret: "whsec_" and base64 of 32 random bytes.
func NewSecret() (string, error) {
	var b [SecretBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b[:]), nil
}

// secretKey is the HMAC key of a secret: the base64 after the prefix.
func secretKey(secret string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(k) == 0 {
		return nil, errors.New("webhook: a Standard Webhooks secret is whsec_ and base64")
	}
	return k, nil
}

// SignStandard is the webhook-signature value of one secret:
// "v1,<base64 HMAC-SHA256(key, id + "." + unix seconds + "." + body)>".
func SignStandard(secret, id string, at time.Time, body []byte) (string, error) {
	k, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, k)
	m.Write([]byte(id + "." + strconv.FormatInt(at.Unix(), 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
}

// signatures is the webhook-signature header of every secret (space separated: during a
// rotation both the new and the old secret sign).
func signatures(secrets []string, id string, at time.Time, body []byte) (string, error) {
	parts := make([]string, 0, len(secrets))
	for _, s := range secrets {
		sig, err := SignStandard(s, id, at, body)
		if err != nil {
			return "", err
		}
		parts = append(parts, sig)
	}
	return strings.Join(parts, " "), nil
}

// VerifyStandard checks a received request's Standard Webhooks headers against body: a
// webhook-timestamp within Tolerance of now and a v1 signature by one of secrets (constant-time
// compare). It returns the webhook-id. Errors: ErrBadSignature.
func VerifyStandard(secrets []string, h http.Header, body []byte, now time.Time) (string, error) {
	id, ts := h.Get(HeaderID), h.Get(HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil {
		return "", ErrBadSignature
	}
	at := time.Unix(sec, 0)
	if d := now.Sub(at); d > Tolerance || d < -Tolerance {
		return "", ErrBadSignature
	}
	for _, s := range secrets {
		want, err := SignStandard(s, id, at, body)
		if err != nil {
			continue
		}
		for _, got := range strings.Fields(h.Get(HeaderSignature)) {
			if hmac.Equal([]byte(got), []byte(want)) {
				return id, nil
			}
		}
	}
	return "", ErrBadSignature
}
