package pdf

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/evidence"
	"github.com/esign-svc/esign/shared/pdf/cms"
	"github.com/esign-svc/esign/shared/pdf/internal/fixture"
	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/pdf/stamp"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
	"github.com/esign-svc/esign/shared/pdf/verify"
)

// bundle writes an evidence bundle for n signers and returns it with its head.
func bundle(t testing.TB, n int) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := evidence.NewWriter(&buf)
	at := time.Date(2024, 6, 11, 9, 30, 0, 1, time.UTC)
	if _, err := w.Append("session.created", at, map[string]any{"signers": n}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		for _, k := range []string{"slot.activated", "slot.viewed", "slot.consented", "slot.signed"} {
			at = at.Add(time.Second + 1)
			if _, err := w.Append(k, at, map[string]any{"slotIndex": i}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return buf.Bytes(), w.Head()
}

// placementsFor fills every manifest field with a value of its kind.
func placementsFor(t testing.TB, fields []stamp.Field) []stamp.Placement {
	sig := fixture.PNG(t, 400, 120)
	var ps []stamp.Placement
	for _, f := range fields {
		p := stamp.Placement{Page: f.Page, Rect: f.Rect, Kind: f.Kind}
		switch f.Kind {
		case stamp.KindSignature, stamp.KindInitials:
			p.Image = sig
		case stamp.KindDate:
			p.Text = "2024-06-11"
		case stamp.KindText:
			p.Text = "Γενικός Διευθυντής / Генеральный директор"
		case stamp.KindCheckbox:
			p.Checked = true
		}
		ps = append(ps, p)
	}
	return ps
}

func pdfcpuValidate(t *testing.T, pdf []byte, allowTimestampNote bool, trusted ...*x509.Certificate) {
	t.Helper()
	conf := model.NewDefaultConfiguration()
	if err := api.Validate(bytes.NewReader(pdf), conf); err != nil {
		t.Fatalf("pdfcpu validate: %v", err)
	}
	dir := t.TempDir()
	for i, c := range trusted {
		pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("trusted%d.pem", i)), pemBytes, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	model.TrustedCertDir = dir
	results, err := api.ValidateSignaturesRaw(bytes.NewReader(pdf), true, model.NewDefaultConfiguration())
	if err != nil {
		t.Fatalf("pdfcpu signature validation: %v", err)
	}
	if len(results) != 1 {
		t.Fatalf("pdfcpu signature validation: %d results", len(results))
	}
	r := results[0]
	if r.Status == model.SignatureStatusValid {
		return
	}
	// pdfcpu v0.15.0 says "valid" only with good revocation evidence for the signer
	// (sign/evidence.go localSignatureAssessment.complete: RevocationGood), which a test
	// certificate without OCSP or CRL cannot have, and it never authenticates an embedded
	// signature-time-stamp token (sign/pkcs7.go applyTimestampEvidence). Accept "unknown" only
	// with no failure reason, the document not modified, and no problem but that note.
	problems := 0
	for _, p := range r.Problems {
		if !(allowTimestampNote && strings.Contains(p, "embedded timestamp token observed but not fully authenticated")) {
			problems++
		}
	}
	if r.Status == model.SignatureStatusUnknown && r.Reason == model.SignatureReasonUnknown &&
		r.DocModified != model.True && problems == 0 && r.Signature.Certified {
		return
	}
	t.Fatalf("pdfcpu signature validation: %v", results)
}

func TestSealTemplateWithManifest(t *testing.T) {
	requireTools(t)
	src := fixture.PDF(t, 3, fixture.TemplateFields, 0)
	fields, err := stamp.ManifestFromPDF(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(fields) != 6 {
		t.Fatalf("manifest has %d fields, want the 6 esign. fields: %+v", len(fields), fields)
	}
	key, cert := tsatest.NewCert(t, "esign seal", 2048)
	tsa := tsatest.Start(t)
	evid, head := bundle(t, 2)
	out, err := Seal(context.Background(), SealInput{
		Source: src, Placements: placementsFor(t, fields), Certificate: fixture.Certificate(2, head),
		Signer: key, Chain: []*x509.Certificate{cert}, TSAURL: tsa.URL, SealName: "ACME Ltd",
		Level: ltv.LevelT, // a TSA alone now means B-LTA (TestSealBLTA); this test checks B-T
	})
	if err != nil {
		t.Fatal(err)
	}
	if tsa.Requests.Load() != 1 {
		t.Fatalf("TSA got %d requests, want 1", tsa.Requests.Load())
	}
	assertPdfsigValid(t, out.SignedPDF)
	qpdfCheck(t, out.SignedPDF)
	qpdfCheck(t, out.CertificatePDF)
	pdfcpuValidate(t, out.SignedPDF, true, cert, tsa.Cert)

	res, err := verify.Verify(out.SignedPDF, verify.Options{Trust: []*x509.Certificate{cert}, Bundle: bytes.NewReader(evid)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Trusted || res.TimestampTime == nil || res.DocMDP != 1 || res.EvidenceHead != head {
		t.Fatalf("verify result %+v", res)
	}

	// the esign fields are gone, the data field and the seal field remain
	after, err := stamp.ManifestFromPDF(out.SignedPDF)
	if err != nil || len(after) != 0 {
		t.Fatalf("manifest after sealing: %v %+v", err, after)
	}
	ctx, err := api.ReadContext(bytes.NewReader(out.SignedPDF), model.NewDefaultConfiguration())
	if err != nil {
		t.Fatal(err)
	}
	names := fieldNames(t, ctx)
	if strings.Join(names, ",") != "customer_name,esign_seal" {
		t.Fatalf("fields after sealing: %v", names)
	}
	text := pdftotext(t, out.SignedPDF)
	for _, want := range []string{"ACME Ltd", "2024-06-11", "Γενικός Διευθυντής", "Evidence certificate", head} {
		if !strings.Contains(text, want) {
			t.Errorf("signed PDF text lacks %q", want)
		}
	}
}

func fieldNames(t *testing.T, ctx *model.Context) []string {
	t.Helper()
	cat, err := ctx.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	af, err := ctx.DereferenceDict(cat["AcroForm"])
	if err != nil {
		t.Fatal(err)
	}
	arr, err := ctx.DereferenceArray(af["Fields"])
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range arr {
		d, err := ctx.DereferenceDict(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ctx.DereferenceStringOrHexLiteral(d["T"], model.V10, nil)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, s)
	}
	return names
}

// keyVaultStyle signs like Key Vault's ES256: raw r||s.
func keyVaultStyle(k *ecdsa.PrivateKey) cms.RawECDSASigner {
	return cms.RawECDSASigner{Key: &k.PublicKey, SignRaw: func(digest []byte) ([]byte, error) {
		r, s, err := ecdsa.Sign(rand.Reader, k, digest)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 64)
		r.FillBytes(out[:32])
		s.FillBytes(out[32:])
		return out, nil
	}}
}

func TestSealKeyTypes(t *testing.T) {
	requireTools(t)
	src := fixture.PDF(t, 1, nil, 0)
	sig := fixture.PNG(t, 300, 100)
	for _, tc := range []struct {
		name string
		bits int
		raw  bool
	}{
		{"rsa2048", 2048, false}, {"rsa3072", 3072, false}, {"rsa4096", 4096, false},
		{"ecdsa-p256", 0, false}, {"ecdsa-p256-raw-rs", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			key, cert := tsatest.NewCert(t, "seal "+tc.name, tc.bits)
			var signer crypto.Signer = key
			if tc.raw {
				signer = keyVaultStyle(key.(*ecdsa.PrivateKey))
			}
			_, head := bundle(t, 1)
			out, err := Seal(context.Background(), SealInput{
				Source:        src,
				SignaturePage: []stamp.SignatureBox{{Name: "Анна Каренина", Role: "buyer", Image: sig}},
				Certificate:   fixture.Certificate(1, head), Signer: signer, Chain: []*x509.Certificate{cert},
			})
			if err != nil {
				t.Fatal(err)
			}
			assertPdfsigValid(t, out.SignedPDF)
			qpdfCheck(t, out.SignedPDF)
			if _, err := verify.Verify(out.SignedPDF, verify.Options{Trust: []*x509.Certificate{cert}}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(pdftotext(t, out.SignedPDF), "Signatures") {
				t.Error("signature page missing")
			}
		})
	}
}

func TestSealKeepsClassicSourceBytes(t *testing.T) {
	requireTools(t)
	// a classic-xref source (as written by pdfdoc) must be a byte prefix of the signed file
	src := classicPDF(t)
	key, cert := tsatest.NewCert(t, "seal", 2048)
	out, err := Seal(context.Background(), SealInput{Source: src, Certificate: fixture.Certificate(1, "00"), Signer: key, Chain: []*x509.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out.SignedPDF, src) {
		t.Fatal("the signed file does not start with the source bytes")
	}
	assertPdfsigValid(t, out.SignedPDF)
}

func TestSealKeepsXRefStreamSourceBytes(t *testing.T) {
	requireTools(t)
	// a source whose last cross-reference section is a stream (pdfcpu writes object streams)
	// is not rewritten either: the update appends a cross-reference stream section
	src := fixture.PDF(t, 3, fixture.TemplateFields, 0)
	if !bytes.Contains(src[max(0, len(src)-2048):], []byte("/Type/XRef")) {
		t.Fatal("fixture does not end with a cross-reference stream")
	}
	fields, err := stamp.ManifestFromPDF(src)
	if err != nil {
		t.Fatal(err)
	}
	key, cert := tsatest.NewCert(t, "seal", 2048)
	_, head := bundle(t, 2)
	out, err := Seal(context.Background(), SealInput{
		Source: src, Placements: placementsFor(t, fields), Certificate: fixture.Certificate(2, head),
		Signer: key, Chain: []*x509.Certificate{cert},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out.SignedPDF, src) {
		t.Fatal("the signed file does not start with the source bytes")
	}
	update := out.SignedPDF[len(src):]
	if !bytes.Contains(update, []byte("/Type/XRef")) || bytes.Contains(update, []byte("\nxref\n")) {
		t.Fatal("the update's cross-reference section is not a stream")
	}
	assertPdfsigValid(t, out.SignedPDF)
	qpdfCheck(t, out.SignedPDF)
	pdfcpuValidate(t, out.SignedPDF, false, cert)
	if _, err := verify.Verify(out.SignedPDF, verify.Options{Trust: []*x509.Certificate{cert}}); err != nil {
		t.Fatal(err)
	}
}

func TestTamperingIsDetected(t *testing.T) {
	requireTools(t)
	src := fixture.PDF(t, 2, nil, 0)
	key, cert := tsatest.NewCert(t, "seal", 2048)
	evid, head := bundle(t, 2)
	out, err := Seal(context.Background(), SealInput{Source: src, Certificate: fixture.Certificate(2, head), Signer: key, Chain: []*x509.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	pdfcpuValidate(t, out.SignedPDF, false, cert)
	t.Run("changed byte", func(t *testing.T) {
		bad := bytes.Clone(out.SignedPDF)
		i := bytes.Index(bad, []byte("evidence sealer"))
		bad[i] = 'E'
		if o := pdfsig(t, bad); strings.Contains(o, "Signature is Valid.") {
			t.Fatalf("pdfsig accepted a changed file:\n%s", o)
		}
		if _, err := verify.Verify(bad, verify.Options{}); !errors.Is(err, verify.ErrInvalid) {
			t.Fatalf("verify accepted a changed file: %v", err)
		}
	})
	t.Run("appended update", func(t *testing.T) {
		bad := append(bytes.Clone(out.SignedPDF), []byte("\n% appended\n")...)
		if _, err := verify.Verify(bad, verify.Options{}); !errors.Is(err, verify.ErrInvalid) {
			t.Fatalf("verify accepted bytes after the signed range: %v", err)
		}
	})
	t.Run("removed bundle line", func(t *testing.T) {
		lines := bytes.SplitAfter(evid, []byte("\n"))
		cut := append(bytes.Clone(bytes.Join(lines[:3], nil)), bytes.Join(lines[4:], nil)...)
		_, err := verify.Verify(out.SignedPDF, verify.Options{Bundle: bytes.NewReader(cut)})
		var le *evidence.LineError
		if !errors.As(err, &le) || le.Line != 4 {
			t.Fatalf("want a LineError at line 4, got %v", err)
		}
	})
	t.Run("other bundle", func(t *testing.T) {
		other, _ := bundle(t, 3)
		if _, err := verify.Verify(out.SignedPDF, verify.Options{Bundle: bytes.NewReader(other)}); !errors.Is(err, verify.ErrInvalid) {
			t.Fatalf("verify accepted a bundle with another head: %v", err)
		}
	})
	t.Run("untrusted signer", func(t *testing.T) {
		_, other := tsatest.NewCert(t, "someone else", 2048)
		if _, err := verify.Verify(out.SignedPDF, verify.Options{Trust: []*x509.Certificate{other}}); !errors.Is(err, verify.ErrInvalid) {
			t.Fatalf("verify trusted an unknown signer: %v", err)
		}
	})
}

func TestSealRejectsBadInput(t *testing.T) {
	t.Parallel()
	key, cert := tsatest.NewCert(t, "seal", 2048)
	src := fixture.PDF(t, 1, nil, 0)
	for _, tc := range []struct {
		name string
		in   SealInput
		code string
	}{
		{"not a pdf", SealInput{Source: []byte("hello")}, "pdf_unreadable"},
		{"truncated pdf", SealInput{Source: src[:len(src)/3]}, "pdf_unreadable"},
		{"page out of range", SealInput{Source: src, Placements: []stamp.Placement{{Page: 2, Rect: stamp.Rect{X2: 10, Y2: 10}, Kind: stamp.KindText, Text: "x"}}}, "placement_invalid"},
		{"bad kind", SealInput{Source: src, Placements: []stamp.Placement{{Page: 1, Rect: stamp.Rect{X2: 10, Y2: 10}, Kind: "stamp"}}}, "placement_invalid"},
		{"bad png", SealInput{Source: src, Placements: []stamp.Placement{{Page: 1, Rect: stamp.Rect{X2: 10, Y2: 10}, Kind: stamp.KindSignature, Image: []byte("nope")}}}, "image_invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.in.Signer, tc.in.Chain = key, []*x509.Certificate{cert}
			_, err := Seal(context.Background(), tc.in)
			var ae *apperr.Error
			if !errors.As(err, &ae) || ae.Code != tc.code {
				t.Fatalf("want apperr %s, got %v", tc.code, err)
			}
		})
	}
}

func TestSealRejectsWeakKey(t *testing.T) {
	t.Parallel()
	key, cert := tsatest.NewCert(t, "weak", 1024)
	_, err := Seal(context.Background(), SealInput{Source: fixture.PDF(t, 1, nil, 0), Signer: key, Chain: []*x509.Certificate{cert}})
	if !errors.Is(err, cms.ErrUnsupportedKey) {
		t.Fatalf("want ErrUnsupportedKey, got %v", err)
	}
}
