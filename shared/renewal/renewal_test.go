package renewal

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/evidence"
	"github.com/esign-svc/esign/shared/pdf"
	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
	"github.com/esign-svc/esign/shared/pdf/verify"
)

// memStore is Store in memory; ETags are versions.
type memStore struct {
	mu    sync.Mutex
	blobs map[string]*memBlob
}

type memBlob struct {
	data     []byte
	etag     int
	modified time.Time
	meta     map[string]string
}

func (m *memStore) put(container, name string, data []byte, modified time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.blobs == nil {
		m.blobs = map[string]*memBlob{}
	}
	m.blobs[container+"/"+name] = &memBlob{data: data, etag: 1, modified: modified}
}

func (m *memStore) WalkSigned(_ context.Context, fn func(Doc) error) error {
	m.mu.Lock()
	var docs []Doc
	for k, b := range m.blobs {
		if name, ok := strings.CutPrefix(k, blobpath.ContainerSigned+"/"); ok {
			docs = append(docs, Doc{Name: name, ETag: fmt.Sprint(b.etag), LastModified: b.modified, Metadata: b.meta})
		}
	}
	m.mu.Unlock()
	for _, d := range docs {
		if err := fn(d); err != nil {
			return err
		}
	}
	return nil
}

func (m *memStore) Read(_ context.Context, container, name string) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[container+"/"+name]
	if !ok {
		return nil, "", apperr.New(apperr.KindNotFound, "blob_not_found", "no blob")
	}
	return b.data, fmt.Sprint(b.etag), nil
}

func (m *memStore) Replace(_ context.Context, container, name, etag, _ string, data []byte, meta map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[container+"/"+name]
	if !ok || fmt.Sprint(b.etag) != etag {
		return apperr.New(apperr.KindPrecondition, "precondition_failed", "changed")
	}
	b.data, b.meta, b.etag, b.modified = data, meta, b.etag+1, time.Now()
	return nil
}

// sealed returns a sealed one-page PDF at level and its evidence bundle.
func sealed(t *testing.T, pki *tsatest.PKI, level ltv.Level) ([]byte, []byte) {
	t.Helper()
	var bundle bytes.Buffer
	w := evidence.NewWriter(&bundle)
	if _, err := w.Append("session.sealing", time.Unix(1718000000, 0), map[string]any{"i": 1}); err != nil {
		t.Fatal(err)
	}
	d := pdfdoc.New()
	if _, err := d.AppendPage(612, 792, []byte("0 g 72 72 10 10 re f\n"), nil); err != nil {
		t.Fatal(err)
	}
	src, err := d.Bytes(nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pdf.Seal(context.Background(), pdf.SealInput{
		Source: src, Certificate: certificate.Certificate{DocumentTitle: "t", EvidenceHeadHash: w.Head()},
		Signer: pki.SealKey, Chain: pki.SealChain(), TSAURL: pki.BaseURL + tsatest.PathTSA, Level: level,
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.SignedPDF, bundle.Bytes()
}

// TestRenewal seals a B-LTA session document whose archive timestamp's certificate (a
// short-lived TSA certificate) expires within the window and a B-T workflow record as sealed
// before issue 25; the TSA gets a new certificate. One run renews the first (a new DSS entry
// and document timestamp) and lifts the second to B-LTA, records each in its bundle, and keeps
// every earlier signature and timestamp valid; the next run finds nothing due.
func TestRenewal(t *testing.T) {
	pki := tsatest.StartPKI(t, 10*24*time.Hour) // expires well within the 180-day window
	lta, ltaBundle := sealed(t, pki, ltv.LevelLTA)
	bt, btBundle := sealed(t, pki, ltv.LevelT)
	if err := pki.RenewTSA(2 * 365 * 24 * time.Hour); err != nil {
		t.Fatal(err)
	}
	st := &memStore{}
	old := time.Now().Add(-MinAge - time.Hour)
	st.put(blobpath.ContainerSigned, "t1/g1/signed.pdf", lta, old)
	st.put(blobpath.ContainerEvidence, "t1/g1/evidence.jsonl", ltaBundle, old)
	st.put(blobpath.ContainerSigned, "t1/g1/certificate.pdf", []byte("%PDF-1.7 not sealed"), old)
	st.put(blobpath.ContainerSigned, "t1/workflows/w1.pdf", bt, old)
	st.put(blobpath.ContainerEvidence, "t1/workflows/w1.jsonl", btBundle, old)
	st.put(blobpath.ContainerSigned, "t1/g2/signed.pdf", lta, time.Now()) // too fresh to touch
	st.put(blobpath.ContainerEvidence, "t1/g2/evidence.jsonl", ltaBundle, time.Now())

	svc := &Service{Store: st, Extend: ExtendWith(pki.BaseURL + tsatest.PathTSA)}
	res, err := svc.Run(context.Background())
	if err != nil || res.Due != 2 || res.Renewed != 2 || res.Failed != 0 {
		t.Fatalf("run: %+v %v", res, err)
	}
	for _, tc := range []struct {
		pdf, bundle, prevLevel string
		before                 []byte
		sigs                   int
	}{
		{"t1/g1/signed.pdf", "t1/g1/evidence.jsonl", "B-LTA", lta, 3},
		{"t1/workflows/w1.pdf", "t1/workflows/w1.jsonl", "B-T", bt, 2},
	} {
		got, _, _ := st.Read(context.Background(), blobpath.ContainerSigned, tc.pdf)
		if !bytes.HasPrefix(got, tc.before) {
			t.Fatalf("%s: the renewal rewrote earlier bytes instead of appending", tc.pdf)
		}
		b, _, _ := st.Read(context.Background(), blobpath.ContainerEvidence, tc.bundle)
		v, err := verify.Verify(got, verify.Options{Trust: []*x509.Certificate{pki.Root}, Bundle: bytes.NewReader(b)})
		if err != nil {
			t.Fatalf("%s: %v", tc.pdf, err)
		}
		if v.Level != ltv.LevelLTA || len(v.Signatures) != tc.sigs || v.Renewals != 1 || !v.ArchiveExpires.Equal(pki.TSA.NotAfter) {
			t.Fatalf("%s: level %s, %d signatures, %d renewals, archive expires %v (TSA %v)", tc.pdf, v.Level, len(v.Signatures), v.Renewals, v.ArchiveExpires, pki.TSA.NotAfter)
		}
		if !strings.Contains(string(b), `"kind":"evidence.renewed"`) || !strings.Contains(string(b), `"previousLevel":"`+tc.prevLevel+`"`) {
			t.Fatalf("%s: bundle lacks the renewal event:\n%s", tc.bundle, b)
		}
		if st.blobs[blobpath.ContainerSigned+"/"+tc.pdf].meta[MetaLevel] != "B-LTA" {
			t.Fatalf("%s: metadata %v", tc.pdf, st.blobs[blobpath.ContainerSigned+"/"+tc.pdf].meta)
		}
	}
	// the renewed documents are written now: even the age rule aside, nothing is due
	svc.Now = func() time.Time { return time.Now().Add(MinAge + time.Hour) }
	if res, err := svc.Run(context.Background()); err != nil || res.Due != 1 || res.Renewed != 1 {
		// only t1/g2, which was too fresh before and is due now (its TSA certificate is short-lived)
		t.Fatalf("second run: %+v %v", res, err)
	}
	// within the window of the TSA's new certificate too: a renewal would not outlive the
	// current archive timestamp, so nothing is written and the documents wait
	svc.RenewBefore = 3 * 365 * 24 * time.Hour
	before, _, _ := st.Read(context.Background(), blobpath.ContainerSigned, "t1/g1/signed.pdf")
	if res, err := svc.Run(context.Background()); err != nil || res.Due != 3 || res.Waiting != 3 || res.Renewed != 0 {
		t.Fatalf("run within the new certificate's window: %+v %v", res, err)
	}
	if after, _, _ := st.Read(context.Background(), blobpath.ContainerSigned, "t1/g1/signed.pdf"); !bytes.Equal(before, after) {
		t.Fatal("a renewal that gains nothing was written")
	}
	svc.RenewBefore = 0
	if res, err := svc.Run(context.Background()); err != nil || res.Due != 0 {
		t.Fatalf("third run: %+v %v", res, err)
	}
}

func TestRenewalFailsLoudlyWithoutRevocation(t *testing.T) {
	pki := tsatest.StartPKI(t, 10*24*time.Hour)
	bt, bundle := sealed(t, pki, ltv.LevelT)
	st := &memStore{}
	old := time.Now().Add(-MinAge - time.Hour)
	st.put(blobpath.ContainerSigned, "t1/g1/signed.pdf", bt, old)
	st.put(blobpath.ContainerEvidence, "t1/g1/evidence.jsonl", bundle, old)
	pki.OCSPDown.Store(true)
	res, err := (&Service{Store: st, Extend: ExtendWith(pki.BaseURL + tsatest.PathTSA)}).Run(context.Background())
	if err != nil || res.Failed != 1 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Error(), "503") {
		t.Fatalf("run: %+v %v", res, err)
	}
	if got, _, _ := st.Read(context.Background(), blobpath.ContainerSigned, "t1/g1/signed.pdf"); !bytes.Equal(got, bt) {
		t.Fatal("a failed renewal changed the document")
	}
	if got, _, _ := st.Read(context.Background(), blobpath.ContainerEvidence, "t1/g1/evidence.jsonl"); !bytes.Equal(got, bundle) {
		t.Fatal("a failed renewal changed the bundle")
	}
}

// TestRenewalAfterTheSealCertificateWasRevoked: the seal certificate revoked after the seal (a
// key rotation) does not stop the renewal: the revocation came after the signature's
// timestamp, the answer saying so is kept in the DSS, and the document stays B-LTA. A seal
// certificate revoked before its use still fails a seal (shared/pdf TestSealFailsForARevoked...).
func TestRenewalAfterTheSealCertificateWasRevoked(t *testing.T) {
	pki := tsatest.StartPKI(t, 10*24*time.Hour)
	bt, bundle := sealed(t, pki, ltv.LevelT)
	pki.RevokeAt(pki.Seal, time.Now().Add(time.Minute)) // after the signature's timestamp
	st := &memStore{}
	old := time.Now().Add(-MinAge - time.Hour)
	st.put(blobpath.ContainerSigned, "t1/g1/signed.pdf", bt, old)
	st.put(blobpath.ContainerEvidence, "t1/g1/evidence.jsonl", bundle, old)
	res, err := (&Service{Store: st, Extend: ExtendWith(pki.BaseURL + tsatest.PathTSA)}).Run(context.Background())
	if err != nil || res.Renewed != 1 {
		t.Fatalf("run: %+v %v", res, err)
	}
	got, _, _ := st.Read(context.Background(), blobpath.ContainerSigned, "t1/g1/signed.pdf")
	v, err := verify.Verify(got, verify.Options{Trust: []*x509.Certificate{pki.Root}})
	if err != nil || v.Level != ltv.LevelLTA {
		t.Fatalf("verify: %v %+v", err, v)
	}
	if rev := v.Signatures[0].Chain[0].Revocation; !strings.HasPrefix(rev, "OCSP revoked later") {
		t.Fatalf("the seal certificate's revocation answer: %q", rev)
	}
}
