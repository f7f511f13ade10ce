package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/blobstore"
)

const (
	tenantA = "11111111-1111-4111-8111-111111111111"
	tenantB = "22222222-2222-4222-8222-222222222222"
)

// reply is an HTTP answer with its body decoded as JSON when it is JSON.
type reply struct {
	Status int
	Header http.Header
	Raw    []byte
	JSON   map[string]any
}

func (r reply) str(key string) string { s, _ := r.JSON[key].(string); return s }

// problem fields of an RFC 9457 answer.
func (r reply) code() string { return r.str("code") }

func (r reply) fields() []string {
	var out []string
	errs, _ := r.JSON["errors"].([]any)
	for _, e := range errs {
		if m, ok := e.(map[string]any); ok {
			out = append(out, fmt.Sprint(m["field"]))
		}
	}
	return out
}

// call sends a request to the service; body may be nil, []byte, string, an io.Reader or any JSON
// value. The answer is checked against docs/openapi.yaml (checkAnswer).
func call(t testing.TB, method, url string, body any, headers map[string]string) reply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	case io.Reader: // streamed: sent chunked, without a declared length
		rd = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return readReply(t, req, resp)
}

// readReply reads the answer to req, checks it as call does and closes its body.
func readReply(t testing.TB, req *http.Request, resp *http.Response) reply {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	checkAnswer(t, req, resp.StatusCode, resp.Header, raw)
	out := reply{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") {
		_ = json.Unmarshal(raw, &out.JSON)
	}
	rememberTokens(raw)
	if resp.StatusCode >= 500 {
		t.Errorf("%s %s answered %d: %s\nits log lines:\n%s", req.Method, req.URL.Path, resp.StatusCode, raw,
			linesWith(svc.logs.String(), resp.Header.Get("X-Correlation-Id")))
	}
	return out
}

// linesWith is the lines of out that hold id (none for an empty id): what the apps logged of
// one request, for a failure's message.
func linesWith(out, id string) string {
	var b strings.Builder
	for line := range strings.Lines(out) {
		if id != "" && strings.Contains(line, id) {
			b.WriteString(line)
		}
	}
	return b.String()
}

var tokenLike = regexp.MustCompile(`"(?:accessToken|portalUrl|token)":"([^"]+)"`)

// rememberTokens notes every token or link an answer carries, for the log check.
func rememberTokens(raw []byte) {
	for _, m := range tokenLike.FindAllSubmatch(raw, -1) {
		v := string(m[1])
		if i := strings.Index(v, "token="); i >= 0 {
			v = v[i+len("token="):]
		}
		remember("token", v)
	}
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

// blobs is a blob store on the test Azurite.
func blobs(t testing.TB) *blobstore.Store {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	return blobstore.New(acct)
}

// uploadFixture puts a testdata file into tenant A's folder of the documents container under a
// fresh name and returns its blob path and pdfHash.
func uploadFixture(t testing.TB, file string) (path, hash string) {
	return uploadFixtureAs(t, tenantA, file)
}

// uploadFixtureAs is uploadFixture into tenant's folder (a request names only its own).
func uploadFixtureAs(t testing.TB, tenant, file string) (path, hash string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return uploadBytes(t, tenant, b)
}

func uploadBytes(t testing.TB, tenant string, b []byte) (path, hash string) {
	t.Helper()
	st := blobs(t)
	ctx := context.Background()
	if err := st.EnsureContainer(ctx, "documents"); err != nil {
		t.Fatal(err)
	}
	name := tenant + "/e2e/" + uuid.NewString() + ".pdf"
	if _, err := st.Put(ctx, "documents", name, bytes.NewReader(b), "application/pdf", nil); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return "documents/" + name, "sha256:" + hex.EncodeToString(sum[:])
}

// createBody is a valid create request for the template fixture with n signers.
func createBody(t testing.TB, mode string, n int) map[string]any {
	t.Helper()
	path, hash := uploadFixture(t, "template-3p.pdf")
	roles := []string{"buyer", "seller", "witness"}
	var signers []any
	for i := 0; i < n; i++ {
		signers = append(signers, map[string]any{"slotIndex": i, "role": roles[i%len(roles)],
			"email": email(i), "namePrefill": fmt.Sprintf("Signer %d", i)})
	}
	return map[string]any{"correlationId": "corr-" + uuid.NewString(), "documentId": "Contract 42", "docType": "contract",
		"pdfBlobPath": path, "pdfHash": hash, "signingMode": mode, "signers": signers}
}

// email makes a fresh test address and remembers it for the log check.
func email(i int) string {
	e := fmt.Sprintf("signer%d-%s@example.test", i, uuid.NewString()[:8])
	remember("e-mail address", e)
	return e
}

func createSession(t testing.TB, tenant string, body map[string]any) reply {
	t.Helper()
	r := call(t, "POST", svc.url("esign/session"), body, bearer(svc.jwt(t, tenant, "Esign.Initiator")))
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	return r
}

func status(t testing.TB, tenant, correlationID string) reply {
	t.Helper()
	return call(t, "GET", svc.url("esign/session/"+correlationID+"/status"), nil, bearer(svc.jwt(t, tenant, "Esign.Initiator")))
}
