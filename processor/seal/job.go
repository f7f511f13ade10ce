// Package seal is the processor's seal job (spec "Evidence certificate", DESIGN 3 and 6): for a
// session whose required slots are all signed it stamps the signers' values on the rendered
// PDF, appends the evidence certificate, signs the result with the seal key, writes the signed
// PDF, the certificate and the JSONL evidence bundle, records the session as complete and
// queues the notices; then it purges the signature images. It also handles the seal queue's
// poison messages and re-queues sessions stuck in sealing.
//
// Idempotency: a duplicate message for a complete session is acknowledged with no effect. The
// three blobs are overwritten by every attempt (their content is not deterministic: the
// signature time and any timestamp differ), and the session records their paths only after all
// three are written, so a crash part way is completed by the retry, which rewrites all three
// from one attempt. A per-session seal lock (esign.SessionJobs.LockSeal) keeps two attempts
// from interleaving their writes. The lock is short (LockTTL) and renewed while the attempt
// runs, so the lock of an attempt that died (a killed processor) soon expires; a message that
// finds the lock held is retried, not acknowledged, so the killed attempt's own message seals
// the session once the lock has expired.
package seal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/processor/internal/sealcfg"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/pdf/ltv"
)

// Function names (the folders under processor/functions).
const (
	FunctionName          = "Seal"
	PoisonFunctionName    = "SealPoison"
	ReconcileFunctionName = "ReconcileSealing"
)

// Containers the job writes to (DESIGN 3).
const (
	ContainerSigned   = blobpath.ContainerSigned
	ContainerEvidence = blobpath.ContainerEvidence
)

// Defaults of Deps.
const (
	DefaultStuckAfter = sealcfg.DefaultStuckAfter
	DefaultLockTTL    = sealcfg.DefaultLockTTL
	// ReconcileLimit bounds the sessions one reconciler run re-queues.
	ReconcileLimit = 200
)

// Blobs is what the job needs of the blob store (*blobstore.Store).
type Blobs interface {
	Open(ctx context.Context, container, name string) (io.ReadCloser, blobstore.Props, error)
	Put(ctx context.Context, container, name string, r io.Reader, contentType string, metadata map[string]string) (string, error)
	EnsureContainer(ctx context.Context, name string) error
}

var _ Blobs = (*blobstore.Store)(nil)

// Deps are the job's dependencies. Sessions (the session jobs' use cases), Blobs and Key are
// required.
type Deps struct {
	Sessions      *esign.SessionJobs
	Blobs         Blobs
	Key           sealcfg.Key
	TSAURL        string           // optional RFC 3161 authority (SEAL_TSA_URL)
	Level         ltv.Level        // SEAL_LEVEL (sealcfg.Config.Level); zero: pdf.ResolveLevel's default
	EngineVersion string           // shown in the certificate (version.Engine)
	Now           func() time.Time // default time.Now
	StuckAfter    time.Duration    // reconciler threshold; default DefaultStuckAfter
	LockTTL       time.Duration    // seal lock lifetime, renewed every third of it; default DefaultLockTTL
	// Meter queues session.sealed once the session is complete (DESIGN 19); off without
	// LICENSING_URL.
	Meter licensing.Meter
}

// Job runs the seal queue, its poison queue and the reconciler.
type Job struct {
	d Deps
	// afterWrite runs after the blobs are written and before the session is completed (tests
	// use it to simulate a crash there).
	afterWrite func() error
	// renewTicks, when set, drives the seal lock's renewal instead of a ticker every third of
	// LockTTL, and afterRenew runs after each renewal (tests drive renewal with them and the
	// clock in Deps.Now, not by sleeping).
	renewTicks <-chan time.Time
	afterRenew func()
}

// New makes the job; zero optional Deps get their defaults. It does no I/O. Errors: a missing
// dependency.
func New(d Deps) (*Job, error) {
	if d.Sessions == nil || d.Sessions.Store == nil || d.Blobs == nil || d.Key.Signer == nil || len(d.Key.Chain) == 0 {
		return nil, errors.New("seal: Sessions, Blobs and Key are required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.StuckAfter <= 0 {
		d.StuckAfter = DefaultStuckAfter
	}
	if d.LockTTL <= 0 {
		d.LockTTL = DefaultLockTTL
	}
	return &Job{d: d}, nil
}

// Functions is the job's function table: the seal queue, its poison queue and the reconciler timer.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{
		{Name: FunctionName, Handler: funcproto.QueueHandler(j.Handle)},
		{Name: PoisonFunctionName, Handler: funcproto.QueueHandler(j.HandlePoison)},
		{Name: ReconcileFunctionName, Handler: funcproto.TimerHandler(j.Reconcile)},
	}
}

func (j *Job) now() time.Time { return j.d.Now().UTC() }

// Paths of a session's outputs.
func signedName(s *esign.Session) string   { return s.TenantID + "/" + s.GroupID + "/signed.pdf" }
func certName(s *esign.Session) string     { return s.TenantID + "/" + s.GroupID + "/certificate.pdf" }
func evidenceName(s *esign.Session) string { return s.TenantID + "/" + s.GroupID + "/evidence.jsonl" }

func newOwner() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
