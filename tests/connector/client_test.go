package connector

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/esign-svc/esign/connector/client"
	"github.com/esign-svc/esign/connector/settings"
	"github.com/esign-svc/esign/devtools/devkeys"
)

func newClient(t *testing.T, set map[string]string) (*client.Client, *client.ClientCredentials) {
	t.Helper()
	s, err := settings.Load(settings.Map(set))
	if err != nil {
		t.Fatal(err)
	}
	tokens := &client.ClientCredentials{TokenURL: s.TokenURL(), ClientID: s.ClientID, ClientSecret: s.ClientSecret, Scope: s.Scope}
	return client.New(s.BaseURL, s.Code, tokens), tokens
}

// flakyTokens hands out a token the service refuses first, then the real source's: the client
// must drop the refused one and retry once with a fresh token.
type flakyTokens struct {
	real        *client.ClientCredentials
	calls       atomic.Int32
	invalidated atomic.Int32
}

func (f *flakyTokens) Token(ctx context.Context) (string, error) {
	if f.calls.Add(1) == 1 {
		return "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", nil
	}
	return f.real.Token(ctx)
}

func (f *flakyTokens) Invalidate(tok string) { f.invalidated.Add(1); f.real.Invalidate(tok) }

// TestClientAuth: the client gets a token from the OAuth client-credentials grant once and
// reuses it until shortly before it expires; a token the dispatcher refuses (401) is dropped and
// the request made once more with a fresh one; a wrong secret is the token endpoint's
// invalid_client; a wrong host key is the Functions host's bare 401.
func TestClientAuth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := connSettings(t, nil)
	cl, tokens := newClient(t, set)
	for range 3 {
		if _, _, err := cl.ListBatches(ctx, ""); err != nil {
			t.Fatal(err)
		}
	}
	if n := tokens.Fetches(); n != 1 {
		t.Fatalf("three calls fetched %d tokens, want 1 (cached)", n)
	}
	// Past the token's lifetime less the margin, the next call fetches a new one.
	tokens.Now = func() time.Time { return time.Now().Add(59*time.Minute + 30*time.Second) }
	if _, _, err := cl.ListBatches(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if n := tokens.Fetches(); n != 2 {
		t.Fatalf("near expiry: %d fetches, want 2", n)
	}

	flaky := &flakyTokens{real: &client.ClientCredentials{TokenURL: tokens.TokenURL, ClientID: tokens.ClientID,
		ClientSecret: tokens.ClientSecret, Scope: tokens.Scope}}
	fc := client.New(baseURL(), set[settings.KeyCode], flaky)
	if _, _, err := fc.ListBatches(ctx, ""); err != nil {
		t.Fatalf("after a refused token: %v", err)
	}
	if flaky.calls.Load() != 2 || flaky.invalidated.Load() != 1 {
		t.Fatalf("token calls %d, invalidations %d; want 2 and 1", flaky.calls.Load(), flaky.invalidated.Load())
	}

	bad := connSettings(t, map[string]string{settings.KeyClientSecret: "wrong-secret"})
	bc, _ := newClient(t, bad)
	_, _, err := bc.ListBatches(ctx, "")
	var te *client.TokenError
	if !errors.As(err, &te) || te.Code != "invalid_client" || te.Status != http.StatusUnauthorized {
		t.Fatalf("wrong secret: %v", err)
	}
	if strings.Contains(err.Error(), "wrong-secret") {
		t.Fatal("the error repeats the secret")
	}

	hk := connSettings(t, map[string]string{settings.KeyCode: "not-the-host-key"})
	hc, _ := newClient(t, hk)
	_, _, err = hc.ListBatches(ctx, "")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusUnauthorized || ce.Code() != "" || !strings.Contains(err.Error(), "SERVICE_DISPATCHER_CODE") {
		t.Fatalf("wrong host key: %v", err)
	}
	if strings.Contains(err.Error(), "not-the-host-key") {
		t.Fatal("the error repeats the host key")
	}

	// A role the client lacks is the service's typed 403.
	ap := connSettings(t, map[string]string{settings.KeyClientID: devkeys.DevApproverClientID})
	ac, _ := newClient(t, ap)
	_, err = ac.CreateSession(ctx, client.CreateSessionRequest{CorrelationID: "x", DocumentID: "x", DocType: "x",
		PDFBlobPath: "documents/x.pdf", PDFHash: "sha256:" + strings.Repeat("0", 64), SigningMode: "single",
		Signers: []client.Signer{{Role: "buyer", Email: "a@example.test"}}})
	if client.CodeOf(err) != "role_required" || client.StatusOf(err) != http.StatusForbidden {
		t.Fatalf("approver creating a session: %v", err)
	}
	// Bad input is the service's 400 naming the field's path.
	_, err = cl.CreateSession(ctx, client.CreateSessionRequest{CorrelationID: "x", DocumentID: "x", DocType: "x",
		PDFBlobPath: "documents/x.pdf", PDFHash: "sha256:" + strings.Repeat("0", 64), SigningMode: "single",
		Signers: []client.Signer{{Role: "buyer", Email: "not-an-address"}}})
	if !errors.As(err, &ce) || ce.Status != http.StatusBadRequest || len(ce.Problem.Errors) == 0 || ce.Problem.Errors[0].Field != "signers[0].email" {
		t.Fatalf("bad e-mail: %v", err)
	}

	h, err := cl.Health(ctx)
	if err != nil || h.Status != "ok" || !h.Storage["blob"].Reachable {
		t.Fatalf("health %+v %v", h, err)
	}
}
