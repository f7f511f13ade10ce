package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/esign-svc/esign/connector/settings"
)

// TokenSource gives the bearer token of each request. Invalidate drops a cached token the
// dispatcher refused, so that the next Token fetches a new one.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
	Invalidate(token string)
}

// ClientCredentials is the OAuth 2.0 client-credentials grant (RFC 6749 4.4) against TokenURL,
// the token cached until shortly before it expires (RefreshBefore, default one minute, or a
// tenth of its lifetime when that is shorter). Safe for concurrent use: one request at a time
// fetches a token.
type ClientCredentials struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	Scope        string
	// HTTP makes the token requests; nil: a client with a 30-second time-out.
	HTTP *http.Client
	// RefreshBefore is how long before its expiry a cached token is replaced.
	RefreshBefore time.Duration
	// Now replaces time.Now (tests).
	Now func() time.Time

	mu      sync.Mutex
	token   string
	expires time.Time
	fetches int
}

// TokenError is a refused or failed token request. It never holds the secret or a token.
type TokenError struct {
	Status      int    // the token endpoint's status; 0 when there was no answer
	Code        string // the OAuth error code (invalid_client, invalid_scope, ...)
	Description string
	Err         error // a transport failure
}

func (e *TokenError) Error() string {
	switch {
	case e.Err != nil:
		return "token request failed: " + e.Err.Error()
	case e.Code != "":
		return fmt.Sprintf("token request refused (%d %s): %s", e.Status, e.Code, e.Description)
	}
	return fmt.Sprintf("token request refused with status %d", e.Status)
}

func (e *TokenError) Unwrap() error { return e.Err }

// Token returns the cached token, or fetches one. Errors: *TokenError.
func (c *ClientCredentials) Token(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.token != "" && now.Before(c.expires) {
		return c.token, nil
	}
	tok, lifetime, err := c.fetch(ctx)
	if err != nil {
		return "", err
	}
	early := c.RefreshBefore
	if early <= 0 {
		early = time.Minute
	}
	early = min(early, lifetime/10)
	c.token, c.expires = tok, now.Add(lifetime-early)
	c.fetches++
	return tok, nil
}

// Fetches counts the tokens fetched so far (operators' diagnostics and tests).
func (c *ClientCredentials) Fetches() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fetches
}

// Invalidate drops token when it is the cached one.
func (c *ClientCredentials) Invalidate(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == token {
		c.token = ""
	}
}

func (c *ClientCredentials) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *ClientCredentials) fetch(ctx context.Context) (string, time.Duration, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.ClientID},
		"client_secret": {c.ClientSecret}, "scope": {c.Scope}}
	if settings.CheckSecretURL(c.TokenURL) != nil {
		return "", 0, &TokenError{Err: errors.New("the token URL must be https (plain http only to a loopback host): the client secret is never sent in clear")}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, &TokenError{Err: fmt.Errorf("the token URL is not usable")}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	h := c.HTTP
	if h == nil {
		h = &http.Client{Timeout: 30 * time.Second}
	}
	h = guarded(h) // a 307/308 would post the client secret again, to wherever it points
	resp, err := h.Do(req)
	if err != nil {
		return "", 0, &TokenError{Err: err}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var body struct {
		AccessToken string          `json:"access_token"`
		TokenType   string          `json:"token_type"`
		ExpiresIn   json.RawMessage `json:"expires_in"`
		Error       string          `json:"error"`
		Description string          `json:"error_description"`
	}
	_ = json.Unmarshal(raw, &body)
	if resp.StatusCode != http.StatusOK {
		return "", 0, &TokenError{Status: resp.StatusCode, Code: body.Error, Description: body.Description}
	}
	if body.AccessToken == "" || !strings.EqualFold(body.TokenType, "bearer") {
		return "", 0, &TokenError{Status: resp.StatusCode, Code: "invalid_response", Description: "no bearer access_token in the answer"}
	}
	// expires_in is a number (Entra ID v2) or a string of digits (v1).
	secs, err := parseSeconds(body.ExpiresIn)
	if err != nil || secs <= 0 {
		return "", 0, &TokenError{Status: resp.StatusCode, Code: "invalid_response", Description: "expires_in is not a positive number of seconds"}
	}
	return body.AccessToken, time.Duration(secs) * time.Second, nil
}

func parseSeconds(raw json.RawMessage) (int64, error) {
	var n int64
	if err := json.Unmarshal(raw, &n); err == nil {
		return n, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, err
	}
	_, err := fmt.Sscanf(s, "%d", &n)
	return n, err
}

// StaticToken is a fixed bearer token (a token from `make token`, say); Invalidate does nothing.
type StaticToken string

// Token returns the token.
func (s StaticToken) Token(context.Context) (string, error) { return string(s), nil }

// Invalidate does nothing: a static token cannot be refreshed.
func (StaticToken) Invalidate(string) {}
