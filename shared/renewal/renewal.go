// Package renewal keeps sealed documents verifiable for as long as they are kept (DESIGN 15):
// it finds the sealed PDFs whose last archive timestamp's certificate expires within a window
// (or that are below B-LTA: documents sealed before issue 25 are B-B or B-T), adds new
// validation data and a new document timestamp (pdf.Extend), and records each renewal as an
// "evidence.renewed" event in the document's JSONL evidence bundle. The processor's
// RenewEvidence timer runs it; it reads no environment and knows no storage SDK.
package renewal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/evidence"
	"github.com/esign-svc/esign/shared/pdf"
	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/pdf/verify"
)

// EventKind is the evidence bundle event of a renewal (verify accepts a bundle whose lines
// after the sealed head are all renewals).
const EventKind = verify.RenewalEventKind

// Blob metadata the job keeps on a sealed PDF, so that a run reads only the documents due.
const (
	MetaLevel          = "padeslevel"
	MetaArchiveExpires = "archiveexpires" // RFC 3339, the last archive timestamp's certificate's notAfter
)

// DefaultRenewBefore is EVIDENCE_RENEW_BEFORE's default.
const DefaultRenewBefore = 180 * 24 * time.Hour

// MinAge is how long a sealed PDF rests before the job touches it: a workflow record a session
// signs next is that session's source, checked against its SHA-256 when the session seals.
const MinAge = 30 * 24 * time.Hour

// Doc is one sealed PDF of a listing.
type Doc struct {
	Name         string // blob name in blobpath.ContainerSigned
	ETag         string
	LastModified time.Time
	Metadata     map[string]string
}

// Store is the blob storage the job needs.
type Store interface {
	// WalkSigned calls fn for every blob of the signed container, with its metadata.
	WalkSigned(ctx context.Context, fn func(Doc) error) error
	// Read returns a blob and its ETag; apperr not found when it is missing.
	Read(ctx context.Context, container, name string) ([]byte, string, error)
	// Replace writes a blob only while its ETag is etag (apperr precondition otherwise).
	Replace(ctx context.Context, container, name, etag, contentType string, data []byte, metadata map[string]string) error
}

// Service renews evidence.
type Service struct {
	Store Store
	// Extend lifts a sealed PDF to B-LTA (pdf.Extend with the seal's TSA).
	Extend      func(ctx context.Context, signed []byte) ([]byte, error)
	RenewBefore time.Duration
	Now         func() time.Time
	Limit       int // documents renewed per run; 0: 100
}

// Result counts a run.
type Result struct {
	// Due documents were read; Renewed got a new document timestamp, Recorded only their
	// metadata (already B-LTA and current), Waiting kept theirs because the TSA's certificate
	// would not outlive the current one (a renewal waits for the TSA's next certificate).
	Due, Renewed, Recorded, Waiting, Failed int
	Errors                                  []error
}

// evidenceName is the bundle of a sealed PDF: <tenant>/<group>/signed.pdf (a session) and
// <tenant>/workflows/<id>.pdf (a workflow record) have theirs in blobpath.ContainerEvidence;
// other blobs of the container (certificates, manifests) are not sealed documents.
func evidenceName(name string) (string, bool) {
	parts := strings.Split(name, "/")
	switch {
	case len(parts) == 3 && parts[2] == "signed.pdf":
		return parts[0] + "/" + parts[1] + "/evidence.jsonl", true
	case len(parts) == 3 && parts[1] == "workflows" && strings.HasSuffix(parts[2], ".pdf"):
		return parts[0] + "/workflows/" + strings.TrimSuffix(parts[2], ".pdf") + ".jsonl", true
	}
	return "", false
}

// Due reports whether d needs the job: not known to be B-LTA, or its archive timestamp's
// certificate expires within before of now; never within MinAge of its last change.
func Due(d Doc, now time.Time, before time.Duration) bool {
	if _, ok := evidenceName(d.Name); !ok || now.Sub(d.LastModified) < MinAge {
		return false
	}
	exp, err := time.Parse(time.RFC3339, d.Metadata[MetaArchiveExpires])
	return d.Metadata[MetaLevel] != ltv.LevelLTA.String() || err != nil || !exp.After(now.Add(before))
}

// Run renews the due documents, up to Limit. A document that fails (unreadable, not valid, a
// TSA or revocation answer missing) is counted and reported in Result.Errors and left as it
// is; the others go on. Errors: the listing's, or the context's.
func (s *Service) Run(ctx context.Context) (Result, error) {
	var res Result
	now := s.now()
	before := s.RenewBefore
	if before <= 0 {
		before = DefaultRenewBefore
	}
	limit := s.Limit
	if limit <= 0 {
		limit = 100
	}
	var due []Doc
	err := s.Store.WalkSigned(ctx, func(d Doc) error {
		if Due(d, now, before) {
			due = append(due, d)
			if len(due) >= limit {
				return errStop
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return res, err
	}
	res.Due = len(due)
	for _, d := range due {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		renewed, err := s.renew(ctx, d, now, before)
		switch {
		case errors.Is(err, errNoGain):
			res.Waiting++
		case err != nil:
			res.Failed++
			res.Errors = append(res.Errors, fmt.Errorf("%s/%s: %w", blobpath.ContainerSigned, d.Name, err))
		case renewed:
			res.Renewed++
		default:
			res.Recorded++
		}
	}
	return res, nil
}

var (
	errStop   = errors.New("renewal: enough documents for this run")
	errNoGain = errors.New("renewal: the TSA's certificate does not outlive the current archive timestamp's")
)

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// renew handles one document: it reports false when the document only needed its metadata
// (B-LTA with a current archive timestamp, from before the job kept metadata).
func (s *Service) renew(ctx context.Context, d Doc, now time.Time, before time.Duration) (bool, error) {
	data, etag, err := s.Store.Read(ctx, blobpath.ContainerSigned, d.Name)
	if err != nil {
		return false, err
	}
	res, err := verify.Verify(data, verify.Options{Now: now})
	if err != nil {
		return false, fmt.Errorf("not renewed, the document does not verify: %w", err)
	}
	if res.Level == ltv.LevelLTA && res.ArchiveExpires != nil && res.ArchiveExpires.After(now.Add(before)) {
		return false, s.Store.Replace(ctx, blobpath.ContainerSigned, d.Name, etag, "application/pdf", data, meta(d.Metadata, res))
	}
	out, err := s.Extend(ctx, data)
	if err != nil {
		return false, err
	}
	after, err := verify.Verify(out, verify.Options{Now: now})
	if err != nil {
		return false, fmt.Errorf("the renewed document does not verify: %w", err)
	}
	if res.Level == ltv.LevelLTA && res.ArchiveExpires != nil && !after.ArchiveExpires.After(*res.ArchiveExpires) {
		return false, errNoGain // nothing written: a new timestamp of the same certificate adds nothing
	}
	if after.Level != ltv.LevelLTA || len(after.Signatures) != len(res.Signatures)+1 {
		return false, fmt.Errorf("the renewed document is %s with %d signatures, want B-LTA with one more than %d", after.Level, len(after.Signatures), len(res.Signatures))
	}
	// the bundle first: a renewal whose PDF is then not written (a concurrent change, a crash)
	// is tried again by the next run and recorded again; a written PDF is always recorded
	sum := sha256.Sum256(out)
	arch := after.Signatures[len(after.Signatures)-1]
	event := map[string]any{
		"document":        blobpath.ContainerSigned + "/" + d.Name,
		"previousLevel":   res.Level.String(),
		"level":           after.Level.String(),
		"timestampTime":   arch.Time.UTC().Format(time.RFC3339),
		"archiveExpires":  after.ArchiveExpires.UTC().Format(time.RFC3339),
		"timestampIssuer": arch.Signer.Subject.CommonName,
		"pdfSha256":       hex.EncodeToString(sum[:]),
	}
	if err := s.record(ctx, d.Name, now, event); err != nil {
		return false, err
	}
	if err := s.Store.Replace(ctx, blobpath.ContainerSigned, d.Name, etag, "application/pdf", out, meta(d.Metadata, after)); err != nil {
		return false, fmt.Errorf("writing the renewed document: %w", err)
	}
	return true, nil
}

func meta(old map[string]string, res *verify.Result) map[string]string {
	m := map[string]string{}
	for k, v := range old {
		m[k] = v
	}
	m[MetaLevel] = res.Level.String()
	if res.ArchiveExpires != nil {
		m[MetaArchiveExpires] = res.ArchiveExpires.UTC().Format(time.RFC3339)
	}
	return m
}

// record appends the renewal event to the document's bundle (retrying once on a concurrent
// change of the bundle).
func (s *Service) record(ctx context.Context, name string, at time.Time, event map[string]any) error {
	ev, _ := evidenceName(name)
	for try := 0; ; try++ {
		b, etag, err := s.Store.Read(ctx, blobpath.ContainerEvidence, ev)
		if err != nil {
			return fmt.Errorf("reading the evidence bundle: %w", err)
		}
		head, n, err := evidence.Verify(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("the evidence bundle does not verify: %w", err)
		}
		buf := bytes.NewBuffer(append(make([]byte, 0, len(b)+1024), b...))
		w, err := evidence.ResumeWriter(buf, int64(n), head)
		if err != nil {
			return err
		}
		if _, err := w.Append(EventKind, at, event); err != nil {
			return err
		}
		err = s.Store.Replace(ctx, blobpath.ContainerEvidence, ev, etag, "application/x-ndjson", buf.Bytes(), nil)
		if apperr.KindOf(err) == apperr.KindPrecondition && try == 0 {
			continue
		}
		if err != nil {
			return fmt.Errorf("writing the evidence bundle: %w", err)
		}
		return nil
	}
}

// ExtendWith is the Service.Extend of a seal configuration: B-LTA with the TSA at tsaURL.
func ExtendWith(tsaURL string) func(ctx context.Context, signed []byte) ([]byte, error) {
	return func(ctx context.Context, signed []byte) ([]byte, error) {
		return pdf.Extend(ctx, signed, ltv.LevelLTA, tsaURL, nil)
	}
}
