package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	documents "github.com/esign-svc/esign/shared/document" // the e2e package has its own document()
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/web"
)

// upload sends body to POST /api/documents as a PDF with an initiator's JWT of tenant.
func upload(t testing.TB, tenant string, body any, headers map[string]string) reply {
	t.Helper()
	h := map[string]string{"Content-Type": "application/pdf", "Authorization": "Bearer " + svc.jwt(t, tenant, "Esign.Initiator")}
	for k, v := range headers {
		h[k] = v
	}
	return call(t, "POST", svc.url("documents"), body, h)
}

func sha256Of(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// TestUploadDocumentThenSignIt uploads the template fixture, finds it stored under the path
// and hash the answer gives, and creates a signing session on them.
func TestUploadDocumentThenSignIt(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("testdata", "template-3p.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	r := upload(t, tenantA, src, nil)
	if r.Status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.Status, r.Raw)
	}
	path, hash := r.str("pdfBlobPath"), r.str("pdfHash")
	if !strings.HasPrefix(path, "documents/"+tenantA+"/uploads/") || !strings.HasSuffix(path, ".pdf") {
		t.Errorf("pdfBlobPath %q", path)
	}
	if hash != sha256Of(src) || r.JSON["pages"] != float64(3) || r.JSON["size"] != float64(len(src)) {
		t.Errorf("answer %s, want hash %s, 3 pages, %d bytes", r.Raw, sha256Of(src), len(src))
	}
	stored, meta, err := blobs(t).ReadAll(context.Background(), "documents", strings.TrimPrefix(path, "documents/"), documents.MaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	if sha256Of(stored) != hash || meta[documents.MetaTenant] != tenantA {
		t.Errorf("stored blob: hash %s, metadata %v", sha256Of(stored), meta)
	}

	body := createBody(t, "parallel", 2)
	body["pdfBlobPath"], body["pdfHash"] = path, hash
	created := createSession(t, tenantA, body)
	if created.str("state") != "pending" || len(slotsOf(t, created, "slots")) != 2 {
		t.Errorf("create on the upload: %s", created.Raw)
	}

	// The same bytes again are a second document under another name.
	again := upload(t, tenantA, src, nil)
	if again.Status != http.StatusCreated || again.str("pdfBlobPath") == path || again.str("pdfHash") != hash {
		t.Errorf("second upload: %d %s", again.Status, again.Raw)
	}
}

// TestUploadDocumentRefusals: what is not a PDF is 400 naming the body, a wrong type is 400,
// the caller needs a JWT (401) with the initiator role (403).
func TestUploadDocumentRefusals(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("testdata", "plain-1p.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	pdf := map[string]string{}
	cases := []struct {
		name    string
		body    []byte
		headers map[string]string
		status  int
		code    string
		field   bool
	}{
		{"HTML", []byte("<!doctype html><html><body><p>hello</p></body></html>"), pdf, 400, pdfdoc.CodeUnreadable, true},
		{"empty", []byte{}, pdf, 400, pdfdoc.CodeUnreadable, true},
		{"truncated", src[:len(src)/2], pdf, 400, pdfdoc.CodeUnreadable, true},
		{"a PDF sent as HTML", src, map[string]string{"Content-Type": "text/html"}, 400, web.CodeUnsupportedMediaType, false},
		{"a PDF sent as JSON", src, map[string]string{"Content-Type": "application/json"}, 400, web.CodeUnsupportedMediaType, false},
		{"no JWT", src, map[string]string{"Authorization": ""}, 401, "auth_required", false},
		{"another role", src, map[string]string{"Authorization": "Bearer " + svc.jwt(t, tenantA, "Service.Admin")}, 403, "role_required", false},
	}
	for _, tc := range cases {
		r := upload(t, tenantA, tc.body, tc.headers)
		if r.Status != tc.status || r.code() != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.Status, r.Raw, tc.status, tc.code)
			continue
		}
		if tc.field && (len(r.fields()) != 1 || r.fields()[0] != web.BodyField) {
			t.Errorf("%s: fields %v, want [body]", tc.name, r.fields())
		}
	}
}

// TestUploadDocumentLimit sends bodies through the local Functions host: a PDF of exactly
// 50 MiB is stored, one byte more is 413, declared (refused unread) or chunked (refused while
// read).
func TestUploadDocumentLimit(t *testing.T) {
	t.Parallel()
	d := pdfdoc.New()
	if _, err := d.AppendPage(595.28, 841.89, []byte("BT ET\n"), types.Dict{}); err != nil {
		t.Fatal(err)
	}
	pad := make([]byte, documents.MaxBytes-64<<10)
	_, _ = rand.Read(pad)
	d.AddStream(pdfdoc.Stream{Dict: types.Dict{}, Data: pad})
	src, err := d.Bytes(nil)
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, documents.MaxBytes+1) // whitespace after %%EOF up to the limit, and one byte more
	copy(body, src)
	for i := len(src); i < len(body); i++ {
		body[i] = '\n'
	}

	r := upload(t, tenantA, body[:documents.MaxBytes], nil)
	if r.Status != http.StatusCreated || r.str("pdfHash") != sha256Of(body[:documents.MaxBytes]) || r.JSON["size"] != float64(documents.MaxBytes) {
		t.Fatalf("a PDF of exactly 50 MiB: %d %s", r.Status, r.Raw)
	}
	r, closed := uploadReadingWhileWriting(t, body)
	if r.Status != http.StatusRequestEntityTooLarge || r.code() != web.CodeBodyTooLarge || !closed {
		t.Errorf("50 MiB + 1, declared: %d (connection closed: %v) %s", r.Status, closed, r.Raw)
	}
	r = upload(t, tenantA, io.MultiReader(bytes.NewReader(body)), nil)
	if r.Status != http.StatusRequestEntityTooLarge || r.code() != web.CodeBodyTooLarge {
		t.Errorf("50 MiB + 1, chunked: %d %s", r.Status, r.Raw)
	}
}

// uploadReadingWhileWriting sends body with its declared length on a connection of its own and
// reads the answer while the body is still being written, as a client must to receive an
// answer given before the body was read: the route refuses a declared 50 MiB + 1 unread, and
// the local host then closes the connection without reading the rest (Go's http.Client,
// which reads only once it has written, may then see the reset instead of the answer). closed
// reports that the answer said Connection: close.
func uploadReadingWhileWriting(t *testing.T, body []byte) (r reply, closed bool) {
	t.Helper()
	req, err := http.NewRequest("POST", svc.url("documents"), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/pdf")
	req.Header.Set("Authorization", "Bearer "+svc.jwt(t, tenantA, "Esign.Initiator"))
	u, _ := url.Parse(svc.url(""))
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() { _ = req.Write(conn) }() // fails with the reset once the host closes
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	return readReply(t, req, resp), resp.Close
}
