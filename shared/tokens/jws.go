package tokens

// A deliberately small, hand-rolled JWS (RFC 7515) compact serialisation for HS256 only.
//
// Why not jwx here: these tokens are only ever made and read by this service, so the format can
// be exactly one shape. Hand-rolling lets the parser refuse everything else up front (any header
// member but alg/kid/typ, any alg but HS256, non-canonical base64, oversized input) with no
// algorithm negotiation at all, and keeps it trivially fuzzable. jwx is used where interop
// matters: Entra ID tokens (package auth) and the operator's licence (package licence).

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// MaxTokenLen bounds the input the parser looks at; longer tokens are refused unread.
const MaxTokenLen = 4096

const algHS256 = "HS256"

var b64 = base64.RawURLEncoding.Strict()

type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ,omitempty"`
}

// signCompact serialises payload under the key (kid, secret).
func signCompact(kid string, secret []byte, payload []byte) (string, error) {
	h, err := json.Marshal(header{Alg: algHS256, Kid: kid, Typ: "JWT"})
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	sb.Grow(b64.EncodedLen(len(h)) + b64.EncodedLen(len(payload)) + 45)
	sb.WriteString(b64.EncodeToString(h))
	sb.WriteByte('.')
	sb.WriteString(b64.EncodeToString(payload))
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(sb.String()))
	sb.WriteByte('.')
	sb.WriteString(b64.EncodeToString(mac.Sum(nil)))
	return sb.String(), nil
}

// verifyCompact checks the structure, header, key and signature, and returns the payload bytes.
// lookup returns the secret for a kid.
func verifyCompact(token string, lookup func(kid string) ([]byte, bool)) ([]byte, error) {
	if token == "" {
		return nil, invalid("the token is missing")
	}
	if len(token) > MaxTokenLen {
		return nil, invalid("the token is too long")
	}
	first := strings.IndexByte(token, '.')
	last := strings.LastIndexByte(token, '.')
	if first <= 0 || last == first || last == len(token)-1 || strings.Count(token, ".") != 2 {
		return nil, invalid("the token is malformed")
	}
	hEnc, pEnc, sEnc := token[:first], token[first+1:last], token[last+1:]
	if pEnc == "" {
		return nil, invalid("the token is malformed")
	}
	hRaw, err := b64.DecodeString(hEnc)
	if err != nil {
		return nil, invalid("the token header is malformed")
	}
	var h header
	dec := json.NewDecoder(bytes.NewReader(hRaw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || dec.More() {
		return nil, invalid("the token header is malformed")
	}
	if h.Alg != algHS256 {
		return nil, invalid("the token algorithm is not accepted")
	}
	if h.Typ != "" && h.Typ != "JWT" {
		return nil, invalid("the token type is not accepted")
	}
	secret, ok := lookup(h.Kid)
	if h.Kid == "" || !ok {
		return nil, invalid("the token key is not known")
	}
	sig, err := b64.DecodeString(sEnc)
	if err != nil || len(sig) != sha256.Size {
		return nil, invalid("the token signature is malformed")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(token[:last]))
	if !hmac.Equal(mac.Sum(nil), sig) {
		return nil, invalid("the token signature does not verify")
	}
	payload, err := b64.DecodeString(pEnc)
	if err != nil {
		return nil, invalid("the token payload is malformed")
	}
	return payload, nil
}
