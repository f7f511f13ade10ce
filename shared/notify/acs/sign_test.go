package acs

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/http"
	"testing"
	"time"
)

// The expected values below were computed outside Go with openssl, not with this package:
//
//	KEYHEX=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
//	printf '%s' '{"senderAddress":"DoNotReply@example.com"}' | openssl dgst -sha256 -binary | base64
//	printf 'POST\n/emails:send?api-version=2023-03-31\nTue, 05 Mar 2024 10:20:30 GMT;contoso.communication.azure.com;<hash>' |
//	  openssl dgst -sha256 -mac HMAC -macopt hexkey:$KEYHEX -binary | base64
func TestSignatureGoldenVectors(t *testing.T) {
	t.Parallel()
	key, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	date := time.Date(2024, 3, 5, 10, 20, 30, 0, time.UTC)
	tests := []struct {
		name, method, url, body string
		wantHash, wantSig       string
	}{
		{
			name: "post with body", method: http.MethodPost,
			url:      "https://contoso.communication.azure.com/emails:send?api-version=2023-03-31",
			body:     `{"senderAddress":"DoNotReply@example.com"}`,
			wantHash: "7hzZAPmNsBqMNNY1ywwL7r0Pp+4GPBmaWxHI5Q8/vO4=",
			wantSig:  "PQ1pdWJaqEl2TFtK/Lp7swNh4UHiLj8mLoOLhUNpUrY=",
		},
		{
			name: "get without body, host with port", method: http.MethodGet,
			url:      "https://contoso.communication.azure.com:8443/emails/operations/op-1?api-version=2023-03-31",
			wantHash: "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
			wantSig:  "lsbmPrIcjaioRkBwX6mQIV4wQL5/4My9jW0SmOeP3ck=",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(tc.method, tc.url, bytes.NewReader([]byte(tc.body)))
			if err != nil {
				t.Fatal(err)
			}
			a := hmacAuth{key: key, now: func() time.Time { return date.In(time.FixedZone("CET", 3600)) }}
			if err := a.authorize(context.Background(), req, []byte(tc.body)); err != nil {
				t.Fatal(err)
			}
			if got := req.Header.Get("x-ms-date"); got != "Tue, 05 Mar 2024 10:20:30 GMT" {
				t.Errorf("x-ms-date = %q", got)
			}
			if got := req.Header.Get("x-ms-content-sha256"); got != tc.wantHash {
				t.Errorf("x-ms-content-sha256 = %q, want %q", got, tc.wantHash)
			}
			want := "HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature=" + tc.wantSig
			if got := req.Header.Get("Authorization"); got != want {
				t.Errorf("Authorization = %q\nwant            %q", got, want)
			}
		})
	}
}
