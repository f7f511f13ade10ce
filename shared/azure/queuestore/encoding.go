package queuestore

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// EncodeMessage is the one encoding of queue messages the project writes itself: the value as a
// JSON object, base64 encoded, as the Functions host expects with messageEncoding base64. The Go
// azqueue SDK does no encoding of its own, so every enqueue goes through here. Values must encode
// to JSON objects: the real host decodes string outputs that happen to be valid base64.
func EncodeMessage(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("queuestore: encode message: %w", err)
	}
	if len(b) == 0 || b[0] != '{' {
		return "", fmt.Errorf("queuestore: queue messages must be JSON objects, got %.20q", b)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// EncodeRaw base64-encodes bytes already serialised (the host side of an output binding).
func EncodeRaw(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// DecodeMessage reverses EncodeMessage's base64 step; the JSON is the caller's to unmarshal.
func DecodeMessage(text string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("queuestore: message is not base64: %w", err)
	}
	return b, nil
}
