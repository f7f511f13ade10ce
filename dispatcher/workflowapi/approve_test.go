package workflowapi

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/workflow"
	"github.com/esign-svc/esign/shared/workflow/workflowtest"
)

// jwtSigner is an RS256 key whose JWKS the verifier reads from a file.
type jwtSigner struct{ key *rsa.PrivateKey }

func newJWT(t *testing.T) (*auth.Verifier, jwtSigner) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	jwks, _ := json.Marshal(map[string]any{"keys": []map[string]string{{"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
		"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}}})
	file := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(file, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewVerifier(auth.Config{Issuer: "https://issuer.test/", Audience: "api://esign", JWKSFile: file})
	if err != nil {
		t.Fatal(err)
	}
	return v, jwtSigner{k}
}

func (s jwtSigner) token(t *testing.T, tenant, email string, roles ...string) string {
	t.Helper()
	now := time.Now()
	b64 := base64.RawURLEncoding.EncodeToString
	hdr, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": "k1", "typ": "JWT"})
	body, _ := json.Marshal(map[string]any{"iss": "https://issuer.test/", "aud": "api://esign", "sub": "sub-1", "oid": "oid-approver",
		"tid": tenant, "name": "Approver", "email": email, "roles": roles, "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	in := b64(hdr) + "." + b64(body)
	sum := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + b64(sig)
}

// The approve route reads the workflow once (it read the same row three times: the tenant
// check, the schema's load and the update), and another tenant's approver gets 404 with
// nothing written.
func TestApproveLoadsOnce(t *testing.T) {
	t.Parallel()
	const tenant, other = "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222"
	a, _ := createFixture(t)
	v, signer := newJWT(t)
	store := &workflowtest.MemStore{W: workflow.Workflow{ID: "wf-1", Tenant: tenant, TemplatePath: "templates/shared/flow/",
		State: workflow.StatePendingApproval, Step: 1, TotalSteps: 2, TotalStages: 2, Round: 1, CreatedBy: "oid-creator",
		Content: workflow.Content{Data: []map[string]any{{"name": "Acme"}, {"spend": json.Number("50")}}}}}
	var emitted []kernel.Change
	a.Verifier, a.Now = v, time.Now
	a.Workflows = &workflow.Workflows{Store: store, Packages: a.Templates, Blobs: a.Blobs, Now: time.Now,
		EmailHash: func(e string) string { return "h:" + strings.ToLower(e) },
		Emit: func(_ context.Context, _ *workflow.Workflow, ch kernel.Change) error {
			emitted = append(emitted, ch)
			return nil
		}}
	mux := http.NewServeMux()
	a.Routes(mux)
	approve := func(tid string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/api/workflow/wf-1/approve", strings.NewReader(`{"comment":"fine"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+signer.token(t, tid, "f1@example.com", auth.RoleWorkflowApprover))
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, r)
		return rec
	}

	if rec := approve(other); rec.Code != http.StatusNotFound || store.Writes != 0 || len(emitted) != 0 {
		t.Fatalf("another tenant's approver: %d %s (%d writes), want 404 and nothing written", rec.Code, rec.Body, store.Writes)
	}
	store.Reads = 0
	rec := approve(tenant)
	if rec.Code != http.StatusOK {
		t.Fatalf("approve: %d %s", rec.Code, rec.Body)
	}
	if store.Reads != 1 || store.Writes != 1 {
		t.Fatalf("approve read the workflow %d times and wrote it %d times, want 1 and 1", store.Reads, store.Writes)
	}
	var got decisionView
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.State != string(workflow.StatePendingApproval) || got.CurrentApprovalStage != 2 {
		t.Fatalf("answer %s (%v), want pending-approval at stage 2", rec.Body, err)
	}
	if len(emitted) != 1 || len(emitted[0].Effects) != 1 || emitted[0].Effects[0].Kind != workflow.EffectNotifyApprovers {
		t.Fatalf("emitted %+v, want the next stage's approver notified", emitted)
	}
}
