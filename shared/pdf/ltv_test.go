package pdf

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/internal/fixture"
	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pdf/stamp"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
	"github.com/esign-svc/esign/shared/pdf/verify"
)

// sealLTA seals a two-page fixture with the PKI's seal key at level.
func sealLTA(t testing.TB, pki *tsatest.PKI, level ltv.Level) SealOutput {
	t.Helper()
	_, head := bundle(t, 2)
	out, err := Seal(context.Background(), SealInput{
		Source: fixture.PDF(t, 2, nil, 0), Certificate: fixture.Certificate(2, head),
		Signer: pki.SealKey, Chain: pki.SealChain(), TSAURL: pki.BaseURL + tsatest.PathTSA, Level: level,
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSealBLTA(t *testing.T) {
	requireTools(t)
	pki := tsatest.StartPKI(t, 48*time.Hour)
	out := sealLTA(t, pki, ltv.LevelNone)
	if out.Level != ltv.LevelLTA {
		t.Fatalf("level %s, want the default B-LTA with a TSA", out.Level)
	}
	qpdfCheck(t, out.SignedPDF)
	// Debian's pdfsig (poppler 22.12) validates the seal and lists the document timestamp
	// without checking it: "Signature Type: unknown", "Signature has not yet been verified."
	// and "Unimplemented Feature (0): Unable to validate this type of signature" on stderr.
	// esign-verify checks the timestamp (package verify).
	o := pdfsig(t, out.SignedPDF)
	if strings.Count(o, "Signature is Valid.") != 1 || !strings.Contains(o, "Signature Field Name: esign_archive") ||
		!strings.Contains(o, "Total document signed") {
		t.Fatalf("pdfsig does not report the seal valid and the archive timestamp over the whole file:\n%s", o)
	}
	doc, err := ltv.Read(out.SignedPDF)
	if err != nil {
		t.Fatal(err)
	}
	if !doc.DSS.Present || len(doc.DSS.Certs) != 4 || len(doc.DSS.OCSPs) != 2 || len(doc.DSS.CRLs) != 1 {
		t.Fatalf("DSS: present %v, %d certs, %d OCSPs, %d CRLs; want the seal, TSA, issuing CA and root, an OCSP answer per leaf and the root's CRL",
			doc.DSS.Present, len(doc.DSS.Certs), len(doc.DSS.OCSPs), len(doc.DSS.CRLs))
	}
	last := doc.Signatures[len(doc.Signatures)-1]
	if !last.IsDocTimestamp() || last.Type != "DocTimeStamp" || last.ByteRange[2]+last.ByteRange[3] != len(out.SignedPDF) {
		t.Fatalf("the file does not end in a document timestamp: %+v", last)
	}
	for name, b := range map[string][]byte{"sealed document": out.SignedPDF, "certificate": out.CertificatePDF} {
		if text := strings.Join(strings.Fields(pdftotext(t, b)), " "); !strings.Contains(text, "Seal level: PAdES B-LTA") {
			t.Errorf("the %s's \"How to verify\" does not name the level", name)
		}
	}
	if !bytes.Contains(out.SignedPDF, []byte("/P 2")) {
		t.Fatal("a B-LTA seal must certify with DocMDP P 2 (P 1 forbids the DSS and timestamp revisions)")
	}
}

func TestSealFailsWhenOCSPIsDown(t *testing.T) {
	pki := tsatest.StartPKI(t, 48*time.Hour)
	pki.OCSPDown.Store(true)
	_, head := bundle(t, 1)
	_, err := Seal(context.Background(), SealInput{
		Source: fixture.PDF(t, 1, nil, 0), Certificate: fixture.Certificate(1, head),
		Signer: pki.SealKey, Chain: pki.SealChain(), TSAURL: pki.BaseURL + tsatest.PathTSA,
	})
	if !errors.Is(err, ltv.ErrRevocation) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("err %v, want an ltv.ErrRevocation naming the responder's 503", err)
	}
}

func TestVerifyReportsLevelOffline(t *testing.T) {
	pki := tsatest.StartPKI(t, 48*time.Hour)
	for _, level := range []ltv.Level{ltv.LevelB, ltv.LevelT, ltv.LevelLT, ltv.LevelLTA} {
		out := sealLTA(t, pki, level)
		// offline: the PKI answers nothing while the verifier runs
		pki.OCSPDown.Store(true)
		pki.CRLDown.Store(true)
		before := pki.OCSPRequests.Load() + pki.CRLRequests.Load()
		res, err := verify.Verify(out.SignedPDF, verify.Options{Trust: []*x509.Certificate{pki.Root}})
		pki.OCSPDown.Store(false)
		pki.CRLDown.Store(false)
		if err != nil {
			t.Fatalf("%s: %v", level, err)
		}
		if res.Level != level || !res.Trusted {
			t.Fatalf("verify reports %s (trusted %v), want %s", res.Level, res.Trusted, level)
		}
		if pki.OCSPRequests.Load()+pki.CRLRequests.Load() != before {
			t.Fatal("the verifier asked the PKI")
		}
		if level == ltv.LevelLTA {
			if res.ArchiveExpires == nil || !res.ArchiveExpires.Equal(pki.TSA.NotAfter) {
				t.Fatalf("archive expiry %v, want the TSA certificate's %v", res.ArchiveExpires, pki.TSA.NotAfter)
			}
			if len(res.Signatures) != 2 || res.Signatures[1].Kind != "document timestamp" {
				t.Fatalf("signatures %+v", res.Signatures)
			}
			for _, c := range append(append([]verify.CertStatus{}, res.Signatures[0].Chain...), res.Signatures[0].TimestampChain...) {
				if c.Revocation == "" {
					t.Fatalf("%s has no revocation answer in the DSS", c.Cert.Subject)
				}
			}
		}
	}
}

func TestTamperAfterArchiveTimestamp(t *testing.T) {
	pki := tsatest.StartPKI(t, 48*time.Hour)
	out := sealLTA(t, pki, ltv.LevelLTA)
	doc, err := ltv.Read(out.SignedPDF)
	if err != nil {
		t.Fatal(err)
	}
	arch := doc.Signatures[len(doc.Signatures)-1]
	t.Run("byte in the archive timestamp's revision", func(t *testing.T) {
		bad := bytes.Clone(out.SignedPDF)
		i := arch.ByteRange[2] + 10 // after /Contents, inside the last revision
		bad[i] ^= 0x01
		if _, err := verify.Verify(bad, verify.Options{}); !errors.Is(err, verify.ErrInvalid) {
			t.Fatalf("verify accepted a changed byte after the archive timestamp's /Contents: %v", err)
		}
	})
	t.Run("byte in the DSS", func(t *testing.T) {
		bad := bytes.Clone(out.SignedPDF)
		i := bytes.Index(bad, []byte("/Type /DSS"))
		if i < 0 {
			i = bytes.Index(bad, []byte("/Type/DSS"))
		}
		bad[i+1] = 't'
		if _, err := verify.Verify(bad, verify.Options{}); !errors.Is(err, verify.ErrInvalid) {
			t.Fatalf("verify accepted a changed DSS: %v", err)
		}
	})
	t.Run("appended revision", func(t *testing.T) {
		bad := append(bytes.Clone(out.SignedPDF), "\n% appended\n"...)
		if _, err := verify.Verify(bad, verify.Options{}); !errors.Is(err, verify.ErrInvalid) {
			t.Fatalf("verify accepted bytes after the archive timestamp: %v", err)
		}
	})
}

func TestVerifyRejectsUnsignedChangeAfterSeal(t *testing.T) {
	pki := tsatest.StartPKI(t, 48*time.Hour)
	out := sealLTA(t, pki, ltv.LevelLT)
	d, err := pdfdoc.Open(out.SignedPDF)
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Page(1)
	if err != nil {
		t.Fatal(err)
	}
	p.Dict["Rotate"] = types.Integer(90)
	d.Set(p.Ref, p.Dict)
	bad, err := d.Bytes(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Verify(bad, verify.Options{}); !errors.Is(err, verify.ErrInvalid) || !strings.Contains(err.Error(), "not validation data") {
		t.Fatalf("verify accepted an unsigned revision that rotates a page: %v", err)
	}
}

// BenchmarkSealLevels seals the 3-page template for three signers at B-T and at B-LTA against
// the development PKI on loopback (its TSA, OCSP responder and CRL): time, allocations and the
// signed file's size per document; the difference is the cost of B-LTA.
func BenchmarkSealLevels(b *testing.B) {
	pki := tsatest.StartPKI(b, 48*time.Hour)
	src := fixture.PDF(b, 3, fixture.TemplateFields, 0)
	fields, err := stamp.ManifestFromPDF(src)
	if err != nil {
		b.Fatal(err)
	}
	for _, level := range []ltv.Level{ltv.LevelT, ltv.LevelLTA} {
		b.Run(level.String(), func(b *testing.B) {
			in := SealInput{Source: src, Placements: placementsFor(b, fields), Certificate: fixture.Certificate(3, goldenHead),
				Signer: pki.SealKey, Chain: pki.SealChain(), TSAURL: pki.BaseURL + tsatest.PathTSA, Level: level}
			var size int
			b.ReportAllocs()
			for b.Loop() {
				out, err := Seal(context.Background(), in)
				if err != nil {
					b.Fatal(err)
				}
				size = len(out.SignedPDF)
			}
			b.ReportMetric(float64(size), "signed-bytes")
		})
	}
}

// BenchmarkExtendToBLTA is the added step alone: a B-T seal lifted to B-LTA (collect the
// chains' OCSP answers and CRL, write the DSS, add the archive timestamp), with the bytes it adds.
func BenchmarkExtendToBLTA(b *testing.B) {
	pki := tsatest.StartPKI(b, 48*time.Hour)
	bt := sealLTA(b, pki, ltv.LevelT).SignedPDF
	var added int
	b.ReportAllocs()
	for b.Loop() {
		out, err := Extend(context.Background(), bt, ltv.LevelLTA, pki.BaseURL+tsatest.PathTSA, nil)
		if err != nil {
			b.Fatal(err)
		}
		added = len(out) - len(bt)
	}
	b.ReportMetric(float64(added), "added-bytes")
}

func TestSealFailsForARevokedCertificate(t *testing.T) {
	for name, pick := range map[string]func(*tsatest.PKI) *x509.Certificate{
		"seal (OCSP)":      func(p *tsatest.PKI) *x509.Certificate { return p.Seal },
		"issuing CA (CRL)": func(p *tsatest.PKI) *x509.Certificate { return p.CA },
	} {
		pki := tsatest.StartPKI(t, 48*time.Hour)
		revoked := pick(pki)
		pki.Revoke(revoked)
		_, head := bundle(t, 1)
		_, err := Seal(context.Background(), SealInput{
			Source: fixture.PDF(t, 1, nil, 0), Certificate: fixture.Certificate(1, head),
			Signer: pki.SealKey, Chain: pki.SealChain(), TSAURL: pki.BaseURL + tsatest.PathTSA,
		})
		if !errors.Is(err, ltv.ErrRevocation) || !strings.Contains(err.Error(), "revoked") || !strings.Contains(err.Error(), revoked.Subject.CommonName) {
			t.Fatalf("%s revoked: err %v, want an ltv.ErrRevocation saying it is revoked", name, err)
		}
	}
}

// TestVerifyChecksValidityAtProofTime: an untimestamped seal is judged at the verifier's
// clock, a timestamped one at its timestamp: past the seal certificate's expiry only the first
// fails.
func TestVerifyChecksValidityAtProofTime(t *testing.T) {
	pki := tsatest.StartPKI(t, 48*time.Hour)
	later := verify.Options{Now: time.Now().Add(72 * time.Hour)}
	if _, err := verify.Verify(sealLTA(t, pki, ltv.LevelB).SignedPDF, later); !errors.Is(err, verify.ErrInvalid) || !strings.Contains(err.Error(), "not valid at") {
		t.Fatalf("a B-B seal verified after its certificate expired: %v", err)
	}
	res, err := verify.Verify(sealLTA(t, pki, ltv.LevelLTA).SignedPDF, later)
	if err != nil || res.Level != ltv.LevelLTA || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "archive timestamp's certificate expired") {
		t.Fatalf("a B-LTA seal after its certificates expired: %v %+v", err, res)
	}
}
