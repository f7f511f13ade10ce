package evidencerenew

import (
	"bytes"
	"context"
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/evidence"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/pdf"
	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
	"github.com/esign-svc/esign/shared/pdf/verify"
	"github.com/esign-svc/esign/shared/renewal"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

// TestHandleLiftsABTSessionDocument is the timer on real blob storage: a session document
// sealed at B-T before issue 25, with its bundle, is lifted to B-LTA a month later (the clock
// moved past renewal.MinAge), the bundle gets the evidence.renewed line, the blob's metadata
// says B-LTA and when to renew, and the document with its bundle verifies offline. Without a
// B-LTA seal configuration the job does nothing.
func TestHandleLiftsABTSessionDocument(t *testing.T) {
	ctx := context.Background()
	pki := tsatest.StartPKI(t, 90*24*time.Hour)
	var bundle bytes.Buffer
	w := evidence.NewWriter(&bundle)
	if _, err := w.Append("session.sealing", time.Now(), map[string]any{"slots": 1}); err != nil {
		t.Fatal(err)
	}
	d := pdfdoc.New()
	if _, err := d.AppendPage(612, 792, []byte("0 g 72 72 10 10 re f\n"), nil); err != nil {
		t.Fatal(err)
	}
	src, _ := d.Bytes(nil)
	tsa := pki.BaseURL + tsatest.PathTSA
	out, err := pdf.Seal(ctx, pdf.SealInput{Source: src, Certificate: certificate.Certificate{DocumentTitle: "t", EvidenceHeadHash: w.Head()},
		Signer: pki.SealKey, Chain: pki.SealChain(), TSAURL: tsa, Level: ltv.LevelT})
	if err != nil {
		t.Fatal(err)
	}
	x := apptest.New(t)
	x.Containers(blobpath.ContainerSigned, blobpath.ContainerEvidence)
	blobs := x.Blobs
	const tenant, group = "t-renew", "g-renew"
	if _, err := blobs.Put(ctx, blobpath.ContainerSigned, tenant+"/"+group+"/signed.pdf", bytes.NewReader(out.SignedPDF), "application/pdf", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := blobs.Put(ctx, blobpath.ContainerEvidence, tenant+"/"+group+"/evidence.jsonl", bytes.NewReader(bundle.Bytes()), "application/x-ndjson", nil); err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(renewal.MinAge + time.Hour) }

	off, _ := New(Deps{Blobs: blobs, TSAURL: tsa, Level: ltv.LevelT, Now: later})
	if err := off.Handle(ctx, funcproto.TimerInfo{}); err != nil || pki.TSARequests.Load() != 1 {
		t.Fatalf("a B-T configuration renewed: %v, %d TSA requests", err, pki.TSARequests.Load())
	}
	j, err := New(Deps{Blobs: blobs, TSAURL: tsa, Level: ltv.LevelLTA, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Handle(ctx, funcproto.TimerInfo{}); err != nil {
		t.Fatal(err)
	}
	got, md, err := blobs.ReadAll(ctx, blobpath.ContainerSigned, tenant+"/"+group+"/signed.pdf", pdf.MaxSourceBytes)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := blobs.ReadAll(ctx, blobpath.ContainerEvidence, tenant+"/"+group+"/evidence.jsonl", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	v, err := verify.Verify(got, verify.Options{Trust: []*x509.Certificate{pki.Root}, Bundle: bytes.NewReader(b)})
	if err != nil {
		t.Fatal(err)
	}
	if v.Level != ltv.LevelLTA || v.Renewals != 1 || !strings.Contains(string(b), renewal.EventKind) {
		t.Fatalf("level %s, %d renewals, bundle:\n%s", v.Level, v.Renewals, b)
	}
	if md[renewal.MetaLevel] != "B-LTA" || md[renewal.MetaArchiveExpires] != pki.TSA.NotAfter.UTC().Format(time.RFC3339) {
		t.Fatalf("metadata %v", md)
	}
}
