package pdf

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/pdf/internal/fixture"
)

// requireTools makes sure pdfsig, pdftotext and qpdf exist (see fixture.RequireTools).
func requireTools(t *testing.T) { t.Helper(); fixture.RequireTools(t) }

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	return fixture.WriteTemp(t, name, b)
}

// pdfsig runs poppler's pdfsig; it exits 0 even on failures, so callers parse the output.
func pdfsig(t *testing.T, pdf []byte) string {
	t.Helper()
	out, _ := exec.Command("pdfsig", writeTemp(t, "in.pdf", pdf)).CombinedOutput()
	return string(out)
}

func assertPdfsigValid(t *testing.T, pdf []byte) {
	t.Helper()
	out := pdfsig(t, pdf)
	if !strings.Contains(out, "Signature is Valid.") || !strings.Contains(out, "Total document signed") {
		t.Fatalf("pdfsig does not report a valid whole-document signature:\n%s", out)
	}
}

func qpdfCheck(t *testing.T, pdf []byte) { t.Helper(); fixture.QPDFCheck(t, pdf) }

func pdftotext(t *testing.T, pdf []byte) string { t.Helper(); return fixture.PDFToText(t, pdf) }
