package e2e

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"net/http"
	"testing"

	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/web"
)

// xrefStreamBomb is a ~200 KB one-page PDF whose cross-reference stream inflates to decoded
// bytes of zeros (pdfcpu alone held 512 MB of it, its own stream cap).
func xrefStreamBomb(decoded int) []byte {
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zeros := make([]byte, 1<<16)
	for n := decoded; n > 0; n -= len(zeros) {
		w.Write(zeros[:min(n, len(zeros))])
	}
	w.Close()
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	for i, o := range []string{"<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>"} {
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	start := b.Len()
	fmt.Fprintf(&b, "4 0 obj\n<< /Type /XRef /W [1 2 1] /Size 5 /Root 1 0 R /Filter /FlateDecode /Length %d >>\nstream\n", z.Len())
	b.Write(z.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", start)
	return b.Bytes()
}

// TestUploadDocumentBomb: POST /api/documents with a ~200 KB decompression bomb is 400
// pdf_too_complex naming the body, and the dispatcher's peak resident memory (VmHWM) grows by
// less than 64 MB over three uploads of it. Not parallel: the peak must be this test's alone.
func TestUploadDocumentBomb(t *testing.T) {
	bomb := xrefStreamBomb(300 << 20)
	pid := svc.host.HandlerPID("dispatcher")
	if pid == 0 {
		t.Fatal("no dispatcher handler")
	}
	before := peakKB(t, pid)
	for i := 0; i < 3; i++ {
		r := upload(t, tenantA, bomb, nil)
		if r.Status != http.StatusBadRequest || r.code() != pdfdoc.CodeTooComplex || len(r.fields()) != 1 || r.fields()[0] != web.BodyField {
			t.Fatalf("upload of a %d KB bomb: %d %s, want 400 %s on body", len(bomb)>>10, r.Status, r.Raw, pdfdoc.CodeTooComplex)
		}
	}
	after := peakKB(t, pid)
	t.Logf("dispatcher VmHWM %d kB before, %d kB after three %d KB bombs (+%d kB)", before, after, len(bomb)>>10, after-before)
	if after-before >= 64<<10 {
		t.Errorf("dispatcher peak memory grew by %d kB, budget 64 MB", after-before)
	}
}

// TestCreateSessionBomb: a bomb stored in the documents container by other means than the
// upload route (which refuses it) is 400 pdf_too_complex naming pdfBlobPath at session create,
// where the session's field read parses it under the same budget.
func TestCreateSessionBomb(t *testing.T) {
	t.Parallel()
	body := createBody(t, "single", 1)
	body["pdfBlobPath"], body["pdfHash"] = uploadBytes(t, tenantA, xrefStreamBomb(300<<20))
	r := call(t, "POST", svc.url("esign/session"), body, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
	if r.Status != http.StatusBadRequest || r.code() != pdfdoc.CodeTooComplex || len(r.fields()) != 1 || r.fields()[0] != "pdfBlobPath" {
		t.Fatalf("create on a bomb: %d %s, want 400 %s on pdfBlobPath", r.Status, r.Raw, pdfdoc.CodeTooComplex)
	}
}
