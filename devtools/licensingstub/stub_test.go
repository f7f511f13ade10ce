package licensingstub

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
)

func signed(t *testing.T, priv ed25519.PrivateKey, exp time.Time) string {
	t.Helper()
	tok, err := licence.Sign(priv, licence.Claims{Issuer: "op", CustomerID: "c", Features: licence.AllFeatures, ExpiresAt: exp.Unix()})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// post sends body to path with the bearer and returns the status and the problem's code.
func post(t *testing.T, url, path, bearer, ctype, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct{ Code string }
	_ = json.NewDecoder(resp.Body).Decode(&p)
	return resp.StatusCode, p.Code
}

// The stub takes only the operator's current licence as bearer, checks shapes strictly, refuses
// by its rules, keeps what it was sent and keeps a usage id once.
func TestStubChecksAndKeeps(t *testing.T) {
	t.Parallel()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	s := New(pub, map[string]string{"bad-tenant": "suspended", "t1/workflow": "not in plan"})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	good := signed(t, priv, time.Now().Add(time.Hour))
	const js = "application/json"
	valid := `{"tenantId":"t1","feature":"esign","correlationId":"c1"}`
	for _, c := range []struct{ name, bearer string }{
		{"none", ""}, {"other operator", signed(t, other, time.Now().Add(time.Hour))},
		{"expired", signed(t, priv, time.Now().Add(-time.Minute))}, {"garbage", "a.b.c"},
	} {
		if st, code := post(t, srv.URL, licensing.PathValidate, c.bearer, js, valid); st != 401 || code != CodeUnauthorized {
			t.Errorf("%s: %d %s", c.name, st, code)
		}
	}
	for _, body := range []string{`{"tenantId":"t1","feature":"esign"}`, `{"tenantId":"t1","feature":"printing","correlationId":"c"}`,
		`{"tenantId":"t1","feature":"esign","correlationId":"c","extra":1}`, `[]`, `{`} {
		if st, _ := post(t, srv.URL, licensing.PathValidate, good, js, body); st != 400 {
			t.Errorf("%s: %d", body, st)
		}
	}
	if st, _ := post(t, srv.URL, licensing.PathValidate, good, "text/plain", valid); st != 400 {
		t.Errorf("text/plain: %d", st)
	}

	c, err := licensing.New(srv.URL, good)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Validate(ctx, "t1", licence.FeatureEsign, "c1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(ctx, "t1", licence.FeatureWorkflow, "c2"); err == nil || !strings.Contains(err.Error(), "not in plan") {
		t.Fatalf("tenant feature rule: %v", err)
	}
	if err := c.Validate(ctx, "bad-tenant", licence.FeatureDelivery, "c3"); err == nil || !strings.Contains(err.Error(), "suspended") {
		t.Fatalf("tenant rule: %v", err)
	}
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	u := licensing.NewUsage(licensing.KindBatchRecord, "t1", time.Now(), "b1", "0")
	s.FailUsage("t1", 1)
	if err := c.Record(ctx, u); err == nil {
		t.Fatal("FailUsage: the post was taken")
	}
	for range 2 {
		if err := c.Record(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := post(t, srv.URL, licensing.PathUsage, good, js, `{"id":"x","tenantId":"t1","kind":"batch.record"}`); st != 400 {
		t.Errorf("usage without at: %d", st)
	}
	got := s.Received()
	if len(got.Validate) != 3 || got.Validate[0] != (licensing.ValidateRequest{TenantID: "t1", Feature: "esign", CorrelationID: "c1"}) ||
		len(got.Usage) != 1 || got.Usage[0].ID != "batch.record:b1:0" || got.UsagePosts != 2 || got.PostsByID["batch.record:b1:0"] != 2 {
		t.Fatalf("received %+v", got)
	}
}
