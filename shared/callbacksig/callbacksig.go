// Package callbacksig signs and verifies the portal callback header
//
//	X-Esign-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>
//
// with a 300-second tolerance both ways, several secrets accepted (rotation) and several v1
// values allowed (a sender mid-rotation signs with each of its secrets). Comparison is constant
// time. Replay protection (each callback id accepted once) needs storage and is the caller's job:
// a verified signature only proves the body is authentic and recent.
package callbacksig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// Header is the HTTP header carrying the signature.
const Header = "X-Esign-Signature"

// Tolerance is how far the signed time may be from now, either way.
const Tolerance = 300 * time.Second

// MinSecretLen is the minimum length of a callback secret, in bytes.
const MinSecretLen = 32

// Parsing limits.
const (
	MaxHeaderLen  = 1024
	MaxSignatures = 8
)

// Stable error codes (KindUnauthenticated).
const (
	CodeMissing = "callback_signature_missing"
	CodeInvalid = "callback_signature_invalid"
	CodeStale   = "callback_signature_stale"
)

// Sign returns the header value for body signed with secret at now.
func Sign(secret string, now time.Time, body []byte) string {
	t := strconv.FormatInt(now.Unix(), 10)
	return "t=" + t + ",v1=" + mac(secret, t, body)
}

func mac(secret, t string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(t))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Parsed is a well-formed header.
type Parsed struct {
	Timestamp  int64
	Signatures [][]byte // the v1 values, decoded
}

// Parse reads a header value strictly: comma-separated key=value items with no spaces; exactly
// one t (decimal seconds, no sign, at most 12 digits); one to eight v1 (64 lowercase or
// uppercase hex digits); other v<digits> schemes are ignored for forward compatibility; any
// other key, an empty item or a repeated t is refused. Errors: KindUnauthenticated
// callback_signature_missing (empty) or callback_signature_invalid.
func Parse(header string) (Parsed, error) {
	if header == "" {
		return Parsed{}, missing()
	}
	if len(header) > MaxHeaderLen {
		return Parsed{}, bad("the signature header is too long")
	}
	var p Parsed
	seenT := false
	for _, item := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(item, "=")
		if !ok || k == "" || v == "" {
			return Parsed{}, bad("the signature header is malformed")
		}
		switch {
		case k == "t":
			if seenT || !digits(v) || len(v) > 12 {
				return Parsed{}, bad("the signature timestamp is malformed")
			}
			seenT = true
			p.Timestamp, _ = strconv.ParseInt(v, 10, 64)
		case k == "v1":
			if len(v) != 2*sha256.Size {
				return Parsed{}, bad("a v1 signature is malformed")
			}
			sig, err := hex.DecodeString(v)
			if err != nil {
				return Parsed{}, bad("a v1 signature is malformed")
			}
			if len(p.Signatures) == MaxSignatures {
				return Parsed{}, bad("too many signatures")
			}
			p.Signatures = append(p.Signatures, sig)
		case k[0] == 'v' && len(k) > 1 && digits(k[1:]):
			// another scheme version: not ours to check.
		default:
			return Parsed{}, bad("the signature header has an unknown item")
		}
	}
	if !seenT || len(p.Signatures) == 0 {
		return Parsed{}, bad("the signature header needs t and v1")
	}
	return p, nil
}

// Verify checks header against the raw body at now with any of secrets. The signature is
// checked before the time, so "stale" is only reported for an authentic but old body.
// Errors: KindUnauthenticated callback_signature_missing, callback_signature_invalid,
// callback_signature_stale; a plain error when secrets is empty (configuration).
func Verify(header string, body []byte, now time.Time, secrets []string) error {
	if len(secrets) == 0 {
		return errors.New("callbacksig: no secrets configured")
	}
	p, err := Parse(header)
	if err != nil {
		return err
	}
	t := strconv.FormatInt(p.Timestamp, 10)
	matched := 0
	for _, s := range secrets {
		want, _ := hex.DecodeString(mac(s, t, body))
		for _, got := range p.Signatures {
			// Every pair is compared, so timing does not reveal which secret matched.
			if hmac.Equal(want, got) {
				matched++
			}
		}
	}
	if matched == 0 {
		return bad("the signature does not verify")
	}
	skew := now.Unix() - p.Timestamp
	if skew > int64(Tolerance/time.Second) || -skew > int64(Tolerance/time.Second) {
		return apperr.New(apperr.KindUnauthenticated, CodeStale,
			"the signature time is more than %d seconds from now", int64(Tolerance/time.Second))
	}
	return nil
}

// ParseSecrets reads the PORTAL_CALLBACK_SECRETS setting: comma-separated secrets, current
// first, each at least 32 bytes, used as given (not base64-decoded), no duplicates.
// The error names the position at fault, never a secret.
func ParseSecrets(setting string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for i, s := range strings.Split(setting, ",") {
		s = strings.TrimSpace(s)
		if len(s) < MinSecretLen {
			return nil, fmt.Errorf("portal callback secret %d: must be at least %d characters", i+1, MinSecretLen)
		}
		if seen[s] {
			return nil, fmt.Errorf("portal callback secret %d: duplicate", i+1)
		}
		seen[s] = true
		out = append(out, s)
	}
	return out, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func missing() error {
	return apperr.New(apperr.KindUnauthenticated, CodeMissing, "the %s header is missing", Header)
}

func bad(detail string) error {
	return apperr.New(apperr.KindUnauthenticated, CodeInvalid, "%s", detail)
}
