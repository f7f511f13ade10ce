package pdf

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	toolsOnce sync.Once
	toolsErr  string
)

// requireTools makes sure pdfsig, pdftotext and qpdf exist, running
// scripts/install-pdf-tools.sh once if not; it skips the test only when they cannot be installed.
func requireTools(t *testing.T) {
	t.Helper()
	toolsOnce.Do(func() {
		if missingTools() == "" {
			return
		}
		script, _ := filepath.Abs("../../scripts/install-pdf-tools.sh")
		out, err := exec.Command("bash", script).CombinedOutput()
		if m := missingTools(); m != "" {
			toolsErr = "PDF tools " + m + " missing and could not be installed (" + strings.TrimSpace(string(out)) + ", " + errString(err) + ")"
		}
	})
	if toolsErr != "" {
		if os.Getenv("CI") != "" {
			t.Fatal(toolsErr) // CI installs them first: a missing tool there is a broken install
		}
		t.Skip(toolsErr)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func missingTools() string {
	var m []string
	for _, tool := range []string{"pdfsig", "pdftotext", "qpdf"} {
		if _, err := exec.LookPath(tool); err != nil {
			m = append(m, tool)
		}
	}
	return strings.Join(m, ", ")
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
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

func qpdfCheck(t *testing.T, pdf []byte) {
	t.Helper()
	out, err := exec.Command("qpdf", "--check", writeTemp(t, "in.pdf", pdf)).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("No syntax or stream encoding errors")) {
		t.Fatalf("qpdf --check failed (%v):\n%s", err, out)
	}
}

func pdftotext(t *testing.T, pdf []byte) string {
	t.Helper()
	out, err := exec.Command("pdftotext", "-enc", "UTF-8", writeTemp(t, "in.pdf", pdf), "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	return string(out)
}
