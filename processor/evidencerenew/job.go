// Package evidencerenew is the processor's RenewEvidence timer job (DESIGN 15): once a day it
// renews the long-term evidence of sealed documents whose last archive timestamp's certificate
// expires within EVIDENCE_RENEW_BEFORE, and lifts documents sealed below B-LTA, through the
// renewal use case (shared/renewal). It runs only when the seal reaches B-LTA (a TSA set and
// SEAL_LEVEL B-LTA, the default with a TSA).
package evidencerenew

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/pdf"
	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/renewal"
)

// FunctionName is the function folder (processor/functions/RenewEvidence).
const FunctionName = "RenewEvidence"

// Schedule is the NCRONTAB schedule in its function.json: every day at 02:30 UTC.
const Schedule = "0 30 2 * * *"

// Deps are the job's dependencies. Blobs is required.
type Deps struct {
	Blobs       *blobstore.Store
	TSAURL      string        // SEAL_TSA_URL
	Level       ltv.Level     // SEAL_LEVEL as resolved; below B-LTA the job does nothing
	RenewBefore time.Duration // EVIDENCE_RENEW_BEFORE; 0: renewal.DefaultRenewBefore
	Now         func() time.Time
}

// Job renews evidence.
type Job struct {
	svc *renewal.Service
	on  bool
}

// New makes the job. It does no I/O. Errors: a missing dependency.
func New(d Deps) (*Job, error) {
	if d.Blobs == nil {
		return nil, errors.New("evidencerenew: Blobs is required")
	}
	on := d.TSAURL != "" && d.Level >= ltv.LevelLTA
	return &Job{on: on, svc: &renewal.Service{Store: store{d.Blobs}, Extend: renewal.ExtendWith(d.TSAURL),
		RenewBefore: d.RenewBefore, Now: d.Now}}, nil
}

// Functions is the job's function table: the renewal timer.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{{Name: FunctionName, Handler: funcproto.TimerHandler(j.Handle)}}
}

// Handle is the timer function. A document that cannot be renewed fails the run (the
// host logs it) after the others were handled; the next run tries it again.
func (j *Job) Handle(ctx context.Context, _ funcproto.TimerInfo) error {
	if !j.on {
		funcproto.Logf(ctx, "evidence renewal: off (the seal does not reach B-LTA: SEAL_TSA_URL or SEAL_LEVEL)")
		return nil
	}
	res, err := j.svc.Run(ctx)
	if apperr.KindOf(err) == apperr.KindNotFound { // no signed container yet: nothing sealed
		return nil
	}
	if err != nil {
		return err
	}
	if res.Due > 0 {
		funcproto.Logf(ctx, "evidence renewal: %d due, %d renewed, %d recorded, %d waiting for the TSA's next certificate, %d failed",
			res.Due, res.Renewed, res.Recorded, res.Waiting, res.Failed)
	}
	return errors.Join(res.Errors...)
}

// store is renewal.Store on the blob store.
type store struct{ b *blobstore.Store }

func (s store) WalkSigned(ctx context.Context, fn func(renewal.Doc) error) error {
	return s.b.Walk(ctx, blobpath.ContainerSigned, "", func(it blobstore.Item) error {
		return fn(renewal.Doc{Name: it.Name, ETag: it.ETag, LastModified: it.LastModified, Metadata: it.Metadata})
	})
}

func (s store) Read(ctx context.Context, container, name string) ([]byte, string, error) {
	rc, props, err := s.b.Open(ctx, container, name)
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(rc, pdf.MaxSourceBytes+1))
	if err != nil {
		return nil, "", err
	}
	if n > pdf.MaxSourceBytes {
		return nil, "", fmt.Errorf("%s/%s is larger than %d bytes", container, name, int64(pdf.MaxSourceBytes))
	}
	return buf.Bytes(), props.ETag, nil
}

func (s store) Replace(ctx context.Context, container, name, etag, contentType string, data []byte, metadata map[string]string) error {
	_, err := s.b.PutIfMatch(ctx, container, name, etag, bytes.NewReader(data), contentType, metadata)
	return err
}
