// Package blobstore is the blob adapter: streaming upload and download, properties, listing,
// hashing, read-only SAS URLs and the confinement of request blob paths (ParsePath).
//
// Errors are *apperr.Error values: KindNotFound with code blob_not_found (blob or container
// missing), KindConflict with code blob_exists (PutIfAbsent), KindPrecondition with code
// precondition_failed (an ETag condition), KindInvalid for bad names and metadata; anything else
// is KindInternal with the SDK error as its cause.
package blobstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
)

// Upload tuning: UploadStream buffers BlockSize*Concurrency bytes at most (8 MiB), whatever the
// size of the stream.
const (
	uploadBlockSize   = 4 << 20
	uploadConcurrency = 2
)

// Store reads and writes blobs of one storage account. It is safe for concurrent use.
type Store struct {
	acct   *azconn.Account
	client *azblob.Client
	udk    udkCache
}

// New makes a Store on the account's blob service.
func New(acct *azconn.Account) *Store {
	return &Store{acct: acct, client: acct.Blob()}
}

// Props are a blob's properties.
type Props struct {
	Size         int64
	ContentType  string
	ETag         string
	LastModified time.Time
	// Metadata keys are lower-cased: the service treats them case-insensitively and the HTTP
	// layer does not preserve their case.
	Metadata map[string]string
}

// EnsureContainer creates the container if it does not exist. Errors: KindInvalid
// (invalid_blob_path) for a bad name, else internal.
func (s *Store) EnsureContainer(ctx context.Context, name string) error {
	if !ValidContainerName(name) {
		return apperr.Invalid(CodeInvalidBlobPath, apperr.Field("container", "must be 3-63 lowercase letters, digits and single hyphens"))
	}
	_, err := s.client.CreateContainer(ctx, name, nil)
	if err == nil || bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		return nil
	}
	return translate(err, "create container", name, "")
}

// Put streams r into the blob (replacing any blob there) and returns the new ETag. Memory use
// is bounded (8 MiB) whatever r's size. Errors: blob_not_found when the container is missing,
// KindInvalid for bad metadata keys.
func (s *Store) Put(ctx context.Context, container, name string, r io.Reader, contentType string, metadata map[string]string) (string, error) {
	return s.put(ctx, container, name, r, contentType, metadata, nil)
}

// PutIfAbsent is Put that only creates: when a blob of that name exists it writes nothing and
// returns KindConflict with code blob_exists.
func (s *Store) PutIfAbsent(ctx context.Context, container, name string, r io.Reader, contentType string, metadata map[string]string) (string, error) {
	etag, err := s.put(ctx, container, name, r, contentType, metadata,
		&blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}})
	if apperr.KindOf(err) == apperr.KindPrecondition { // If-None-Match:* failing is a conflict
		return "", apperr.Wrap(err, apperr.KindConflict, CodeBlobExists, "blob %s/%s already exists", container, name)
	}
	return etag, err
}

// PutIfMatch is Put that only replaces the blob whose ETag is etag: when the blob changed (or
// was deleted) it writes nothing and returns KindPrecondition with code precondition_failed.
func (s *Store) PutIfMatch(ctx context.Context, container, name, etag string, r io.Reader, contentType string, metadata map[string]string) (string, error) {
	if etag == "" {
		return "", fmt.Errorf("blobstore: PutIfMatch %s/%s needs an ETag", container, name)
	}
	e := azcore.ETag(etag)
	return s.put(ctx, container, name, r, contentType, metadata,
		&blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &e}})
}

func (s *Store) put(ctx context.Context, container, name string, r io.Reader, contentType string, metadata map[string]string, cond *blob.AccessConditions) (string, error) {
	md, err := toMetadata(metadata)
	if err != nil {
		return "", err
	}
	opts := &azblob.UploadStreamOptions{
		BlockSize:        uploadBlockSize,
		Concurrency:      uploadConcurrency,
		Metadata:         md,
		AccessConditions: cond,
	}
	if contentType != "" {
		opts.HTTPHeaders = &blob.HTTPHeaders{BlobContentType: to.Ptr(contentType)}
	}
	resp, err := s.client.UploadStream(ctx, container, name, r, opts)
	if err != nil {
		return "", translate(err, "upload", container, name)
	}
	return etagString(resp.ETag), nil
}

// Copy streams the blob src into dst (replacing any blob there) with src's content type. The
// bytes pass through this process (memory bounded as Put's), so the copy needs no copy-source
// authorisation and works the same under a shared key and a managed identity. A missing dst
// container is created. Errors: blob_not_found when src is missing.
func (s *Store) Copy(ctx context.Context, src, dst Path) error {
	for try := 0; ; try++ {
		body, p, err := s.Open(ctx, src.Container, src.Name)
		if err != nil {
			return err
		}
		_, err = s.Put(ctx, dst.Container, dst.Name, body, p.ContentType, nil)
		body.Close()
		if try > 0 || apperr.KindOf(err) != apperr.KindNotFound {
			return err
		}
		if err := s.EnsureContainer(ctx, dst.Container); err != nil { // the first copy into it
			return err
		}
	}
}

// Open streams the blob: the caller reads and closes the body; nothing is buffered beyond the
// transport's. A broken connection is resumed from where it stopped, pinned to the ETag the
// download began with (a blob replaced mid-read fails rather than mixing two versions).
// Errors: blob_not_found.
func (s *Store) Open(ctx context.Context, container, name string) (io.ReadCloser, Props, error) {
	resp, err := s.client.DownloadStream(ctx, container, name, nil)
	if err != nil {
		return nil, Props{}, translate(err, "download", container, name)
	}
	p := Props{
		Size:         deref(resp.ContentLength),
		ContentType:  deref(resp.ContentType),
		ETag:         etagString(resp.ETag),
		LastModified: deref(resp.LastModified),
		Metadata:     fromMetadata(resp.Metadata),
	}
	return resp.NewRetryReader(ctx, &blob.RetryReaderOptions{MaxRetries: 3}), p, nil
}

// OpenRange streams count bytes of the blob from offset, only while the blob still has etag (a
// blob replaced since the caller read its properties fails with precondition_failed instead of
// mixing two versions). Errors: blob_not_found, precondition_failed.
func (s *Store) OpenRange(ctx context.Context, container, name string, offset, count int64, etag string) (io.ReadCloser, error) {
	opts := &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: offset, Count: count}}
	if etag != "" {
		e := azcore.ETag(etag)
		opts.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &e}}
	}
	resp, err := s.client.DownloadStream(ctx, container, name, opts)
	if err != nil {
		return nil, translate(err, "download", container, name)
	}
	return resp.NewRetryReader(ctx, &blob.RetryReaderOptions{MaxRetries: 3}), nil
}

// Properties returns the blob's properties without its content. Errors: blob_not_found.
func (s *Store) Properties(ctx context.Context, container, name string) (Props, error) {
	resp, err := s.client.ServiceClient().NewContainerClient(container).NewBlobClient(name).GetProperties(ctx, nil)
	if err != nil {
		return Props{}, translate(err, "get properties", container, name)
	}
	return Props{
		Size:         deref(resp.ContentLength),
		ContentType:  deref(resp.ContentType),
		ETag:         etagString(resp.ETag),
		LastModified: deref(resp.LastModified),
		Metadata:     fromMetadata(resp.Metadata),
	}, nil
}

// Metadata returns the blob's metadata (keys lower-cased) without its content: Properties for
// callers that keep to plain types. Errors: blob_not_found.
func (s *Store) Metadata(ctx context.Context, container, name string) (map[string]string, error) {
	p, err := s.Properties(ctx, container, name)
	return p.Metadata, err
}

// Delete removes the blob and its snapshots. Errors: blob_not_found when it (or the container)
// is missing; use DeleteIfExists where deleting twice is fine.
func (s *Store) Delete(ctx context.Context, container, name string) error {
	_, err := s.client.DeleteBlob(ctx, container, name, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)})
	return translate(err, "delete", container, name)
}

// DeleteIfExists is the idempotent Delete: a missing blob or container is success.
func (s *Store) DeleteIfExists(ctx context.Context, container, name string) error {
	err := s.Delete(ctx, container, name)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil
	}
	return err
}

// Item is one blob of a listing.
type Item struct {
	Name         string
	Size         int64
	ContentType  string
	ETag         string
	LastModified time.Time
	Metadata     map[string]string // keys lower-cased
}

// Walk calls fn for each blob whose name starts with prefix, in name order, a page at a time
// (memory stays flat however many blobs there are). An error from fn stops the walk and is
// returned. Errors: blob_not_found when the container is missing.
func (s *Store) Walk(ctx context.Context, container, prefix string, fn func(Item) error) error {
	opts := &azblob.ListBlobsFlatOptions{Include: azblob.ListBlobsInclude{Metadata: true}}
	if prefix != "" {
		opts.Prefix = to.Ptr(prefix)
	}
	pager := s.client.NewListBlobsFlatPager(container, opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return translate(err, "list", container, prefix)
		}
		if page.Segment == nil {
			continue
		}
		for _, b := range page.Segment.BlobItems {
			it := Item{Name: deref(b.Name)}
			if p := b.Properties; p != nil {
				it.Size = deref(p.ContentLength)
				it.ContentType = deref(p.ContentType)
				it.ETag = etagString(p.ETag)
				it.LastModified = deref(p.LastModified)
			}
			it.Metadata = fromMetadata(b.Metadata)
			if err := fn(it); err != nil {
				return err
			}
		}
	}
	return nil
}

// List returns every blob whose name starts with prefix (see Walk for large listings).
func (s *Store) List(ctx context.Context, container, prefix string) ([]Item, error) {
	var out []Item
	err := s.Walk(ctx, container, prefix, func(it Item) error { out = append(out, it); return nil })
	return out, err
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func etagString(e *azcore.ETag) string {
	if e == nil {
		return ""
	}
	return string(*e)
}

// ReadAll reads a whole blob of at most limit bytes in one download, with its metadata (keys
// lower-cased). Errors: blob_not_found; document_too_large (KindTooLarge) when the blob is
// larger than limit; the transport's.
func (s *Store) ReadAll(ctx context.Context, container, name string, limit int64) ([]byte, map[string]string, error) {
	rc, props, err := s.Open(ctx, container, name)
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	if props.Size > limit {
		return nil, nil, apperr.New(apperr.KindTooLarge, "document_too_large", "the document is larger than %d bytes", limit)
	}
	buf := bytes.NewBuffer(make([]byte, 0, props.Size))
	if _, err := io.Copy(buf, io.LimitReader(rc, limit+1)); err != nil {
		return nil, nil, translate(err, "download", container, name)
	}
	if int64(buf.Len()) > limit {
		return nil, nil, apperr.New(apperr.KindTooLarge, "document_too_large", "the document is larger than %d bytes", limit)
	}
	return buf.Bytes(), props.Metadata, nil
}

// Exists reports whether the blob exists (one properties request).
func (s *Store) Exists(ctx context.Context, container, name string) (bool, error) {
	_, err := s.Properties(ctx, container, name)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return false, nil
	}
	return err == nil, err
}
