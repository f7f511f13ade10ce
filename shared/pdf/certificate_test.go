package pdf

import (
	"bytes"
	"context"
	"crypto/x509"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/internal/fixture"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
)

var update = flag.Bool("update", false, "rewrite golden files")

const goldenHead = "5d41402abc4b2a76b9719d911017c592aaf4c1b2c3d4e5f60718293a4b5c6d7e"

// TestCertificateText extracts the standalone certificate's text with pdftotext and compares
// it with testdata/certificate.golden (go test -update rewrites it), then checks every item
// of the spec is present, in every script the fixtures use.
func TestCertificateText(t *testing.T) {
	requireTools(t)
	c := fixture.Certificate(10, goldenHead)
	sig := fixture.PNG(t, 300, 100)
	for i := range c.Signers {
		c.Signers[i].SignatureImage = sig
	}
	pdf, err := certificate.Standalone(c, certificate.A4)
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

// TestCertificateLayout: the signers' facts are a table with each signer's drawing (one image
// per signer, none for a signer who declined), a declined signer's facts and reason are shown,
// and the certificate ends with how to verify it.
func TestCertificateLayout(t *testing.T) {
	requireTools(t)
	c := fixture.Certificate(3, goldenHead)
	sig := fixture.PNG(t, 300, 100)
	c.Signers[0].SignatureImage, c.Signers[2].SignatureImage = sig, sig
	declined := &c.Signers[1]
	declined.State, declined.CompletionCondition = "declined", "optional"
	declined.DeclineReason = "The fee schedule on page 2 is not the one we agreed."
	declined.Timeline = []certificate.Transition{declined.Timeline[0], declined.Timeline[1], {State: "declined", At: declined.Timeline[1].At.Add(time.Minute)}}
	pdf, err := certificate.Standalone(c, certificate.A4)
	if err != nil {
		t.Fatal(err)
	}
	qpdfCheck(t, pdf)
	text := pdftotext(t, pdf)
	flat := strings.Join(strings.Fields(text), " ")
	for _, want := range []string{
		"Decline reason " + declined.DeclineReason, "Final state declined", "IP address " + declined.IPAddress,
		"declined: " + certificate.FormatTime(declined.Timeline[2].At), "Signature none (declined)",
		"How to verify", certificate.VerifyCommand, "head " + goldenHead,
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("certificate text lacks %q:\n%s", want, text)
		}
	}
	if i, j := strings.Index(flat, "How to verify"), strings.LastIndex(flat, "Signer 3"); i < j {
		t.Error("the verification paragraph is not at the end")
	}
	out, err := exec.Command("pdfimages", "-list", writeTemp(t, "cert.pdf", pdf)).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfimages: %v\n%s", err, out)
	}
	// a header, a rule, then one "image" line per drawing and one "smask" line per alpha mask
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[2] == "image" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("the certificate draws %d images, want the 2 signers' drawings:\n%s", n, out)
	}
}

// TestCertificateTakesTheSourcePageSize: a Letter document gets Letter certificate pages, in the
// sealed PDF and as the standalone certificate (they were A4 before).
func TestCertificateTakesTheSourcePageSize(t *testing.T) {
	requireTools(t)
	key, cert := tsatest.NewCert(t, "esign seal", 2048)
	out, err := Seal(context.Background(), SealInput{
		Source: classicPDF(t), Certificate: fixture.Certificate(2, goldenHead),
		Signer: key, Chain: []*x509.Certificate{cert},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"sealed PDF": out.SignedPDF, "standalone certificate": out.CertificatePDF} {
		dims, err := api.PageDims(bytes.NewReader(b), model.NewDefaultConfiguration())
		if err != nil {
			t.Fatal(err)
		}
		if len(dims) < 2 && name == "sealed PDF" {
			t.Fatalf("%s has %d pages, want the source page and the certificate", name, len(dims))
		}
		for i, d := range dims {
			if d.Width != 612 || d.Height != 792 {
				t.Errorf("%s page %d is %vx%v, want Letter 612x792", name, i+1, d.Width, d.Height)
			}
		}
	}
}

// TestCertificatePageSizeOfASmallSource: a source page too small to hold the certificate (a
// label) gets A4 certificate pages; a landscape Letter page keeps its size.
func TestCertificatePageSizeOfASmallSource(t *testing.T) {
	for _, tt := range []struct {
		w, h float64
		want certificate.PageSize
	}{{200, 200, certificate.A4}, {792, 612, certificate.PageSize{W: 792, H: 612}}} {
		d := pdfdoc.New()
		if _, err := d.AppendPage(tt.w, tt.h, nil, types.Dict{}); err != nil {
			t.Fatal(err)
		}
		b, err := d.Bytes(nil)
		if err != nil {
			t.Fatal(err)
		}
		src, err := pdfdoc.Open(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := certificate.PageSizeOf(src); got != tt.want {
			t.Errorf("a %vx%v source: certificate pages %v, want %v", tt.w, tt.h, got, tt.want)
		}
	}
}
