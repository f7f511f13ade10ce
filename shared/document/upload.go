package document

// Uploads: the documents an API caller without storage access signs or delivers (DESIGN
// section 12): POST /api/documents stores a PDF that parses in documents/<tenant>/uploads/<uuid>.pdf
// and answers the blob path, hash and page count the create requests take.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/web"
)

// Limits and names of an upload.
const (
	MaxBytes    = 50 << 20          // the largest document accepted (DESIGN section 12)
	MediaType   = "application/pdf" // the body's Content-Type, and the stored blob's
	Container   = "documents"       // the container the create requests read from
	UploadsDir  = "uploads/"        // the blob name prefix of uploads in Container
	CodeEncrypt = "pdf_encrypted"   // 400 (field "body"): an encrypted PDF cannot be sealed
)

// Metadata keys of an uploaded blob, so later routes can confine an upload to its tenant.
const (
	MetaTenant     = "tenant_id"
	MetaHash       = "pdf_hash"
	MetaUploadedAt = "uploaded_at"
)

// Blobs is the blob storage an upload needs (*blobstore.Store).
type Blobs interface {
	PutIfAbsent(ctx context.Context, container, name string, r io.Reader, contentType string, metadata map[string]string) (string, error)
	EnsureContainer(ctx context.Context, name string) error
}

// Uploader is the upload use case.
type Uploader struct {
	Blobs Blobs
	Now   func() time.Time
	NewID func() string // the blob's name under UploadsDir (NewID)
}

// NewID names an upload: a random UUID.
func NewID() string { return uuid.NewString() }

// Upload is a stored upload.
type Upload struct {
	PDFBlobPath string // documents/uploads/<id>.pdf, as the create requests take it
	PDFHash     string // sha256:<lower-case hex> of the stored bytes
	Pages       int
	Size        int64
}

// Upload reads body (at most MaxBytes; length is its declared size, or -1 when unknown, and
// only sizes the buffer), checks that it is a PDF this service can read, and stores it for
// tenant under a new name, create-only, with its tenant, hash and time as metadata. The body
// is held once in memory, hashed while it is read. Errors: 413 body_too_large past MaxBytes
// (also when length says so, before anything is read); 400 body_unreadable; 400 (field
// "body") pdf_unreadable for anything that is not a readable PDF (empty, another format,
// truncated, corrupt), pdf_encrypted for an encrypted one, pdf_too_complex for one past the
// parse budget (pdfdoc.Limits); the store's.
func (u *Uploader) Upload(ctx context.Context, tenant string, body io.Reader, length int64) (Upload, error) {
	if length > MaxBytes {
		return Upload{}, tooLarge()
	}
	var buf bytes.Buffer
	if length > 0 {
		buf.Grow(int(length) + bytes.MinRead) // once: ReadFrom wants MinRead free bytes to see the end
	}
	h := sha256.New()
	n, err := buf.ReadFrom(io.TeeReader(io.LimitReader(body, MaxBytes+1), h))
	switch {
	case err != nil && apperr.KindOf(err) == apperr.KindInternal:
		return Upload{}, apperr.Wrap(err, apperr.KindInvalid, web.CodeBodyUnreadable, "the request body could not be read")
	case err != nil:
		return Upload{}, err // the reader's own 4xx (web.StreamBody)
	case n > MaxBytes:
		return Upload{}, tooLarge()
	case n == 0:
		return Upload{}, unreadable("the body is empty; a PDF document is required")
	}
	pages, err := countPages(buf.Bytes())
	if err != nil {
		return Upload{}, err
	}
	doc := Upload{PDFHash: "sha256:" + hex.EncodeToString(h.Sum(nil)), Pages: pages, Size: n}
	name := blobpath.TenantName(tenant, UploadsDir, u.NewID(), ".pdf")
	meta := map[string]string{MetaTenant: tenant, MetaHash: doc.PDFHash,
		MetaUploadedAt: u.Now().UTC().Format(time.RFC3339)}
	put := func() error {
		_, err := u.Blobs.PutIfAbsent(ctx, Container, name, bytes.NewReader(buf.Bytes()), MediaType, meta)
		return err
	}
	err = put()
	if apperr.KindOf(err) == apperr.KindNotFound { // the first upload of this account
		if err = u.Blobs.EnsureContainer(ctx, Container); err == nil {
			err = put()
		}
	}
	if err != nil {
		return Upload{}, err
	}
	doc.PDFBlobPath = Container + "/" + name
	return doc, nil
}

// countPages opens src with pdfdoc (the reader the seal uses) and counts its pages; every
// failure names the body.
func countPages(src []byte) (int, error) {
	d, err := pdfdoc.Open(src)
	if err != nil {
		if e, ok := apperr.As(err); ok && e.Code == CodeEncrypt {
			return 0, apperr.Invalid(CodeEncrypt, apperr.Field(web.BodyField, "the PDF is encrypted; an encrypted PDF cannot be signed or sealed"))
		}
		if e, ok := apperr.As(err); ok && e.Code == pdfdoc.CodeTooComplex {
			return 0, apperr.Invalid(pdfdoc.CodeTooComplex, apperr.Field(web.BodyField, e.Fields[0].Message))
		}
		return 0, unreadable("not a PDF this service can read")
	}
	defer d.Release()
	n, err := d.PageCount()
	if err != nil || n < 1 {
		return 0, unreadable("the PDF has no readable page tree")
	}
	return n, nil
}

func unreadable(msg string) error {
	return apperr.Invalid(pdfdoc.CodeUnreadable, apperr.Field(web.BodyField, msg))
}

func tooLarge() error {
	return apperr.New(apperr.KindTooLarge, web.CodeBodyTooLarge, "the document is larger than %d bytes (50 MiB)", MaxBytes)
}
