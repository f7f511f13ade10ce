package acs

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// authorizer adds authentication headers to a request whose body is body.
type authorizer interface {
	authorize(ctx context.Context, req *http.Request, body []byte) error
}

// hmacAuth signs requests with the resource access key as Microsoft documents for
// Communication Services ("Sign an HTTP request with HMAC"):
//
//	x-ms-date:           the request time, RFC 1123 in GMT
//	x-ms-content-sha256: base64(SHA-256(body)), also for an empty body
//	StringToSign:        VERB "\n" path-and-query "\n" x-ms-date ";" host ";" content-hash
//	Authorization:       HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature=base64(HMAC-SHA256(key, StringToSign))
//
// host is the request URL's authority (host, and port when not the default), which is what the
// Host header carries.
type hmacAuth struct {
	key []byte
	now func() time.Time
}

func (a hmacAuth) authorize(_ context.Context, req *http.Request, body []byte) error {
	date := a.now().UTC().Format(http.TimeFormat)
	hash := contentHash(body)
	sts := stringToSign(req.Method, pathAndQuery(req), date, req.URL.Host, hash)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-content-sha256", hash)
	req.Header.Set("Authorization", "HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature="+signature(a.key, sts))
	return nil
}

// contentHash is base64(SHA-256(body)).
func contentHash(body []byte) string {
	sum := sha256.Sum256(body)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// stringToSign joins the signed parts in the documented order.
func stringToSign(method, pathAndQuery, date, host, hash string) string {
	return method + "\n" + pathAndQuery + "\n" + date + ";" + host + ";" + hash
}

// signature is base64(HMAC-SHA256(key, StringToSign)) over the UTF-8 bytes of the string.
func signature(key []byte, sts string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(sts))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// pathAndQuery is the request target as sent on the wire (escaped path, raw query).
func pathAndQuery(req *http.Request) string {
	p := req.URL.EscapedPath()
	if p == "" {
		p = "/"
	}
	if req.URL.RawQuery != "" {
		p += "?" + req.URL.RawQuery
	}
	return p
}

// bearerAuth sends an Entra token for TokenScope (managed identity).
type bearerAuth struct {
	cred azcore.TokenCredential
}

func (a bearerAuth) authorize(ctx context.Context, req *http.Request, _ []byte) error {
	tok, err := a.cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{TokenScope}})
	if err != nil {
		// The credential's error names the identity endpoint, never the token.
		return fmt.Errorf("acs: get Entra token: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	return nil
}
