package pdf

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/pdf/internal/fixture"
	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
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
