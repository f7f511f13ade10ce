package acs

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/esign-svc/esign/shared/apperr"
)

// fakeCredential hands out a fixed token and records the scopes asked for.
type fakeCredential struct {
	token string
	err   error

	mu     sync.Mutex
	scopes [][]string
}

func (c *fakeCredential) GetToken(_ context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.mu.Lock()
	c.scopes = append(c.scopes, opts.Scopes)
	c.mu.Unlock()
	if c.err != nil {
		return azcore.AccessToken{}, c.err
	}
	return azcore.AccessToken{Token: c.token, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestBearerMode(t *testing.T) {
	t.Parallel()
	f := newFakeACS(t, nil, jsonReply(http.StatusAccepted, nil, smsResult(true, 202)))
	f.bearer = "token-for-acs"
	cred := &fakeCredential{token: "token-for-acs"}
	cfg := testConfig(t, f)
	cfg.AccessKey = nil
	cfg.Credential = cred
	s, err := NewSMS(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(context.Background(), testSMS()); err != nil {
		t.Fatal(err)
	}
	if len(cred.scopes) != 1 || len(cred.scopes[0]) != 1 || cred.scopes[0][0] != "https://communication.azure.com//.default" {
		t.Errorf("scopes = %v", cred.scopes)
	}
	if h := f.seen()[0].Header.Get("Authorization"); h != "Bearer token-for-acs" {
		t.Errorf("Authorization = %q", h)
	}

	t.Run("wrong token is refused", func(t *testing.T) {
		cfg.Credential = &fakeCredential{token: "stale"}
		s, _ := NewSMS(cfg)
		err := s.Send(context.Background(), testSMS())
		if e, ok := apperr.As(err); !ok || e.Code != CodeAuthRefused || strings.Contains(err.Error(), "stale") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("credential failure is unavailable", func(t *testing.T) {
		cfg.Credential = &fakeCredential{err: errNoToken}
		s, _ := NewSMS(cfg)
		err := s.Send(context.Background(), testSMS())
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindUnavailable {
			t.Fatalf("err = %v", err)
		}
	})
}
