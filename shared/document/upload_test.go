package document_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/web"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

const tenant = "11111111-1111-4111-8111-111111111111"

func store(t testing.TB, az *azuritetest.Instance) *blobstore.Store {
	t.Helper()
	acct := az.Account(t)
	return blobstore.New(acct)
}

// uploader stores into st; its ids are fresh UUIDs, each remembered in *ids.
func uploader(st *blobstore.Store, ids *[]string) *document.Uploader {
	return &document.Uploader{Blobs: st, Now: time.Now, NewID: func() string {
		id := uuid.NewString()
		*ids = append(*ids, id)
		return id
	}}
}

// makePDF builds a PDF of pages pages; pad adds an uncompressed stream of about pad random
// bytes, so that the file reaches a size.
func makePDF(t testing.TB, pages, pad int) []byte {
	t.Helper()
	d := pdfdoc.New()
	font := d.Add(types.Dict{"Type": types.Name("Font"), "Subtype": types.Name("Type1"), "BaseFont": types.Name("Helvetica")})
	for i := 1; i <= pages; i++ {
		content := fmt.Sprintf("BT /F1 18 Tf 72 770 Td (Upload page %d of %d) Tj ET\n", i, pages)
		if _, err := d.AppendPage(595.28, 841.89, []byte(content), types.Dict{"Font": types.Dict{"F1": font}}); err != nil {
			t.Fatal(err)
		}
	}
	if pad > 0 {
		data := make([]byte, pad)
		_, _ = rand.Read(data)
		d.AddStream(pdfdoc.Stream{Dict: types.Dict{}, Data: data})
	}
	b, err := d.Bytes(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// encrypted encrypts src with AES-256; with an empty user password it opens without one.
func encrypted(t testing.TB, src []byte, userPassword string) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := api.Encrypt(bytes.NewReader(src), &out, model.NewAESConfiguration(userPassword, "owner", 256)); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func wantProblem(t *testing.T, err error, kind apperr.Kind, code, field string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != kind || e.Code != code {
		t.Fatalf("err = %v, want kind %d code %s", err, kind, code)
	}
	if field != "" && (len(e.Fields) != 1 || e.Fields[0].Field != field) {
		t.Fatalf("fields %+v, want %s", e.Fields, field)
	}
}

// noneStored fails when any of ids was stored.
func noneStored(t *testing.T, st *blobstore.Store, ids []string) {
	t.Helper()
	for _, id := range ids {
		if ok, err := st.Exists(context.Background(), document.Container, tenant+"/"+document.UploadsDir+id+".pdf"); err != nil || ok {
			t.Errorf("upload %s stored (%v)", id, err)
		}
	}
}

func TestUploadStoresAReadablePDF(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store(t, azuritetest.Shared(t))
	var ids []string
	u := uploader(st, &ids)
	src := makePDF(t, 3, 0)
	for _, declared := range []int64{int64(len(src)), -1} {
		doc, err := u.Upload(ctx, tenant, bytes.NewReader(src), declared)
		if err != nil {
			t.Fatalf("declared %d: %v", declared, err)
		}
		id := ids[len(ids)-1]
		want := document.Upload{PDFBlobPath: "documents/" + tenant + "/uploads/" + id + ".pdf", PDFHash: sha(src), Pages: 3, Size: int64(len(src))}
		if doc != want {
			t.Fatalf("declared %d: %+v, want %+v", declared, doc, want)
		}
		got, meta, err := st.ReadAll(ctx, "documents", tenant+"/uploads/"+id+".pdf", document.MaxBytes)
		if err != nil {
			t.Fatal(err)
		}
		if sha(got) != doc.PDFHash || !bytes.Equal(got, src) {
			t.Errorf("stored bytes differ from the upload (%d bytes, want %d)", len(got), len(src))
		}
		if meta[document.MetaTenant] != tenant || meta[document.MetaHash] != doc.PDFHash {
			t.Errorf("metadata %v", meta)
		}
		if _, err := time.Parse(time.RFC3339, meta[document.MetaUploadedAt]); err != nil {
			t.Errorf("uploaded_at %q: %v", meta[document.MetaUploadedAt], err)
		}
		p, err := st.Properties(ctx, "documents", tenant+"/uploads/"+id+".pdf")
		if err != nil || p.ContentType != "application/pdf" {
			t.Errorf("content type %q (%v)", p.ContentType, err)
		}
	}
	if ids[0] == ids[1] {
		t.Fatal("two uploads, one name")
	}
}

// TestUploadRefusesWhatIsNotAPDF: every body that is not a PDF the seal could read is 400
// naming the body, and nothing is stored.
func TestUploadRefusesWhatIsNotAPDF(t *testing.T) {
	t.Parallel()
	st := store(t, azuritetest.Shared(t))
	good := makePDF(t, 2, 0)
	corrupt := bytes.ReplaceAll(bytes.Clone(good), []byte(" obj"), []byte(" jbo"))
	cases := []struct {
		name string
		body []byte
		code string
	}{
		{"empty", nil, pdfdoc.CodeUnreadable},
		{"HTML", []byte("<!doctype html><html><body>not a PDF</body></html>"), pdfdoc.CodeUnreadable},
		{"a header only", []byte("%PDF-1.7\n"), pdfdoc.CodeUnreadable},
		{"truncated", good[:len(good)/2], pdfdoc.CodeUnreadable},
		{"corrupt objects", corrupt, pdfdoc.CodeUnreadable},
		{"random bytes", bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 1024), pdfdoc.CodeUnreadable},
		{"encrypted, no password to open", encrypted(t, good, ""), document.CodeEncrypt},
		{"encrypted with a password to open", encrypted(t, good, "user"), pdfdoc.CodeUnreadable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ids []string
			_, err := uploader(st, &ids).Upload(context.Background(), tenant, bytes.NewReader(tc.body), int64(len(tc.body)))
			wantProblem(t, err, apperr.KindInvalid, tc.code, web.BodyField)
			noneStored(t, st, ids)
		})
	}
}

// TestUploadLimit: a document of MaxBytes is stored; one byte more is 413, whether the length
// is declared (then nothing is read) or found while reading.
func TestUploadLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store(t, azuritetest.Shared(t))
	var ids []string
	u := uploader(st, &ids)

	pdf := makePDF(t, 1, document.MaxBytes-4096)
	pdf = append(pdf, bytes.Repeat([]byte("\n"), document.MaxBytes-len(pdf))...) // whitespace after %%EOF
	doc, err := u.Upload(ctx, tenant, bytes.NewReader(pdf), -1)
	if err != nil {
		t.Fatalf("a document of exactly MaxBytes: %v", err)
	}
	if doc.Size != document.MaxBytes || doc.PDFHash != sha(pdf) || doc.Pages != 1 {
		t.Fatalf("%+v", doc)
	}

	over := append(pdf, '\n')
	ids = nil
	_, err = u.Upload(ctx, tenant, bytes.NewReader(over), -1)
	wantProblem(t, err, apperr.KindTooLarge, web.CodeBodyTooLarge, "")
	_, err = u.Upload(ctx, tenant, unreadBody{t}, document.MaxBytes+1)
	wantProblem(t, err, apperr.KindTooLarge, web.CodeBodyTooLarge, "")
	noneStored(t, st, ids)
}

// unreadBody fails the test when read.
type unreadBody struct{ t *testing.T }

func (b unreadBody) Read([]byte) (int, error) {
	b.t.Error("a body declared too large was read")
	return 0, io.EOF
}

type brokenBody struct{ r io.Reader }

func (b brokenBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		return n, errors.New("connection reset by peer")
	}
	return n, err
}

// TestUploadBodyThatBreaksOff: a body that fails mid-way is 400 body_unreadable, and a 4xx of
// the reader (web.StreamBody's limit) is answered as it is.
func TestUploadBodyThatBreaksOff(t *testing.T) {
	t.Parallel()
	st := store(t, azuritetest.Shared(t))
	var ids []string
	u := uploader(st, &ids)
	src := makePDF(t, 1, 0)
	_, err := u.Upload(context.Background(), tenant, brokenBody{bytes.NewReader(src)}, -1)
	wantProblem(t, err, apperr.KindInvalid, web.CodeBodyUnreadable, "")
	tooLarge := apperr.New(apperr.KindTooLarge, web.CodeBodyTooLarge, "over")
	_, err = u.Upload(context.Background(), tenant, io.MultiReader(bytes.NewReader(src), errReader{tooLarge}), -1)
	wantProblem(t, err, apperr.KindTooLarge, web.CodeBodyTooLarge, "")
	noneStored(t, st, ids)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestUploadIsCreateOnly: a name that is taken is never overwritten (409 blob_exists).
func TestUploadIsCreateOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store(t, azuritetest.Shared(t))
	id := uuid.NewString()
	u := &document.Uploader{Blobs: st, Now: time.Now, NewID: func() string { return id }}
	first := makePDF(t, 1, 0)
	if _, err := u.Upload(ctx, tenant, bytes.NewReader(first), -1); err != nil {
		t.Fatal(err)
	}
	_, err := u.Upload(ctx, tenant, bytes.NewReader(makePDF(t, 2, 0)), -1)
	wantProblem(t, err, apperr.KindConflict, blobstore.CodeBlobExists, "")
	got, meta, err := st.ReadAll(ctx, "documents", tenant+"/uploads/"+id+".pdf", document.MaxBytes)
	if err != nil || !bytes.Equal(got, first) || meta[document.MetaTenant] != tenant {
		t.Fatalf("the first upload changed: %d bytes, %v (%v)", len(got), meta, err)
	}
}

// TestUploadCreatesTheContainer: the first upload of an account makes the documents
// container (an Azurite of its own, without it).
func TestUploadCreatesTheContainer(t *testing.T) {
	t.Parallel()
	st := store(t, azuritetest.Start(t))
	var ids []string
	doc, err := uploader(st, &ids).Upload(context.Background(), tenant, bytes.NewReader(makePDF(t, 1, 0)), -1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.PDFBlobPath, "documents/"+tenant+"/uploads/") {
		t.Fatalf("path %q", doc.PDFBlobPath)
	}
	if ok, err := st.Exists(context.Background(), "documents", tenant+"/uploads/"+ids[0]+".pdf"); err != nil || !ok {
		t.Fatalf("not stored (%v)", err)
	}
}

// BenchmarkUpload uploads a PDF of about 5 MiB (run with -benchmem: B/op is the memory one
// upload allocates, body buffer, parse and storage client together).
func BenchmarkUpload(b *testing.B) {
	st := store(b, azuritetest.Shared(b))
	var ids []string
	u := uploader(st, &ids)
	src := makePDF(b, 3, 5<<20)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := u.Upload(context.Background(), tenant, bytes.NewReader(src), int64(len(src))); err != nil {
			b.Fatal(err)
		}
	}
}
