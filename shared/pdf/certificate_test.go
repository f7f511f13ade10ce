package pdf

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/internal/fixture"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

var update = flag.Bool("update", false, "rewrite golden files")

const goldenHead = "5d41402abc4b2a76b9719d911017c592aaf4c1b2c3d4e5f60718293a4b5c6d7e"

// TestCertificateText extracts the standalone certificate's text with pdftotext and compares
// it with testdata/certificate.golden (go test -update rewrites it), then checks every item
// of the spec is present, in every script the fixtures use.
func TestCertificateText(t *testing.T) {
	requireTools(t)
	c := fixture.Certificate(10, goldenHead)
	pdf, err := certificate.Standalone(c)
	if err != nil {
		t.Fatal(err)
	}
	qpdfCheck(t, pdf)
	if err := api.Validate(bytes.NewReader(pdf), model.NewDefaultConfiguration()); err != nil {
		t.Fatalf("pdfcpu validate: %v", err)
	}
	d, err := pdfdoc.Open(pdf)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.PageCount(); err != nil || n < 4 {
		t.Fatalf("10 signers rendered on %d pages (%v); expected pagination over several", n, err)
	}
	text := pdftotext(t, pdf)
	golden := filepath.Join("testdata", "certificate.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update once)", err)
	}
	if text != string(want) {
		t.Errorf("certificate text differs from %s; run go test -run TestCertificateText -update and review the diff", golden)
	}
	flat := strings.Join(strings.Fields(text), " ")
	items := []string{c.DocumentTitle, c.CorrelationID, c.RenderedPDFHash, c.TenantID, c.SigningMode,
		"2024-06-18T09:30:00.123456789Z", c.EngineVersion, goldenHead, c.GroupID}
	for _, s := range c.Signers {
		items = append(items, s.Name, s.EmailHash, s.IPAddress, s.OTP.Channel, s.OTP.MaskedDestination)
		for _, tr := range s.Timeline {
			items = append(items, tr.State+": "+certificate.FormatTime(tr.At))
		}
		for _, cs := range s.Consents {
			items = append(items, cs.Text, certificate.FormatTime(cs.AcceptedAt), cs.Version)
		}
	}
	for _, tr := range c.Signers[0].Transfers {
		items = append(items, tr.Event+": "+certificate.FormatTime(tr.At))
	}
	for _, item := range items {
		if !strings.Contains(flat, strings.Join(strings.Fields(item), " ")) {
			t.Errorf("certificate text lacks %q", item)
		}
	}
	// long user agents wrap, so check them without line breaks
	if !strings.Contains(strings.ReplaceAll(text, "\n", " "), fixture.UserAgent) {
		t.Error("certificate text lacks the user agent")
	}
}
