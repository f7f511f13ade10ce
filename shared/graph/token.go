package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/esign-svc/esign/shared/apperr"
)

// tokenSource yields a bearer token for Graph. invalidate drops a token Graph refused so the
// next call fetches a fresh one.
type tokenSource interface {
	token(ctx context.Context) (string, error)
	invalidate(tok string)
}

var (
	_ tokenSource = (*secretSource)(nil)
	_ tokenSource = (*credentialSource)(nil)
)

// refreshMargin: a cached token is replaced this long before it expires, so that a request
// never leaves with a token that dies in flight.
const refreshMargin = 5 * time.Minute

// secretSource is the OAuth 2.0 client-credentials grant against Entra ID's v2.0 endpoint.
type secretSource struct {
	endpoint, clientID, secret, scope string
	http                              *http.Client
	now                               func() time.Time

	mu      sync.Mutex // held while fetching, so concurrent uploads share one request
	cached  string
	refresh time.Time
}

type tokenResponse struct {
	TokenType   string          `json:"token_type"`
	AccessToken string          `json:"access_token"`
	ExpiresIn   json.RawMessage `json:"expires_in"` // a number; some proxies send a string
}

type tokenError struct {
	Error string `json:"error"`
}

func (s *secretSource) token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cached != "" && s.now().Before(s.refresh) {
		return s.cached, nil
	}
	form := url.Values{
		"client_id":     {s.clientID},
		"client_secret": {s.secret},
		"scope":         {s.scope},
		"grant_type":    {"client_credentials"},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return "", apperr.Wrap(redactURLError(err), apperr.KindUnavailable, "graph_unavailable",
			"the Entra ID token endpoint could not be reached")
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return "", &apperr.Error{Kind: apperr.KindUnavailable, Code: "graph_unavailable",
			Detail:     "the Entra ID token endpoint is unavailable; try again later",
			RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), s.now()),
			Err:        fmt.Errorf("token endpoint status %d", resp.StatusCode)}
	default:
		// 400 (invalid_client, unauthorized_client, invalid_scope) and 401 (a wrong secret)
		// are configuration problems: retrying will not help until the settings change.
		var te tokenError
		_ = json.Unmarshal(body, &te)
		return "", apperr.Wrap(fmt.Errorf("token endpoint status %d, error %q", resp.StatusCode, safeCode(te.Error)),
			apperr.KindUnavailable, "graph_auth_failed",
			"the document-library integration could not authenticate to Microsoft Graph; check GRAPH_TENANT_ID, GRAPH_CLIENT_ID and GRAPH_CLIENT_SECRET")
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil || tr.AccessToken == "" || !strings.EqualFold(tr.TokenType, "bearer") {
		return "", apperr.Wrap(fmt.Errorf("token response without a bearer access_token"),
			apperr.KindUnavailable, "graph_auth_failed", "the Entra ID token endpoint returned no usable token")
	}
	lifetime := time.Duration(parseSeconds(tr.ExpiresIn)) * time.Second
	now := s.now()
	s.cached = tr.AccessToken
	s.refresh = now.Add(lifetime - refreshMargin)
	if lifetime <= 2*refreshMargin { // short-lived tokens: keep for half their life
		s.refresh = now.Add(lifetime / 2)
	}
	return s.cached, nil
}

func (s *secretSource) invalidate(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cached == tok {
		s.cached = ""
	}
}

func parseSeconds(raw json.RawMessage) int64 {
	var n int64
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		var v int64
		if _, err := fmt.Sscanf(s, "%d", &v); err == nil {
			return v
		}
	}
	return 0
}

// credentialSource asks an azcore.TokenCredential (managed identity, workload identity...);
// azidentity credentials cache and refresh their tokens themselves.
type credentialSource struct {
	cred  azcore.TokenCredential
	scope string
}

func (c *credentialSource) token(ctx context.Context) (string, error) {
	tok, err := c.cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{c.scope}})
	if err != nil {
		return "", apperr.Wrap(err, apperr.KindUnavailable, "graph_auth_failed",
			"the document-library integration could not get a Microsoft Graph token from its managed identity")
	}
	if tok.Token == "" {
		return "", apperr.New(apperr.KindUnavailable, "graph_auth_failed", "the managed identity returned an empty token")
	}
	return tok.Token, nil
}

func (c *credentialSource) invalidate(string) {}

// safeCode keeps an OAuth/Graph error code only if it looks like one (letters, digits, _ .),
// so that nothing a server echoes back lands in an error message.
func safeCode(s string) string {
	if len(s) > 64 {
		return "unknown"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.') {
			return "unknown"
		}
	}
	return s
}

// redactURLError strips the URL from a *url.Error: upload-session URLs carry a bearer-like
// secret in their query string.
func redactURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
