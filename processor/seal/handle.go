package seal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/pdf"
	"github.com/esign-svc/esign/shared/queues"
)

// systemActor stamps the job's audit events.
var systemActor = esign.Actor{Kind: "system", ID: "seal"}

// failure is a seal that can never succeed as things stand (a hash mismatch, a missing or
// unreadable source, a missing signature): it is recorded with FailSeal and the message is
// acknowledged. Reason is short and holds no personal data.
type failure struct {
	reason string
	cause  error
}

func (f *failure) Error() string { return f.reason }
func (f *failure) Unwrap() error { return f.cause }

func fail(reason string, cause error) error { return &failure{reason: reason, cause: cause} }

// Handle is the seal queue's function. It decodes an esign.SealMessage and seals the session.
// Replies (through funcproto.QueueHandler):
//   - nil with notify outputs once the session is sealed and complete;
//   - nil without effect for a session already complete (a duplicate) or not sealing;
//   - esign.ErrSealBusy (retried) while another attempt holds the session's seal lock;
//   - nil with a seal-failure notice after recording seal.failed for a seal that can never
//     succeed (source hash mismatch, source missing or unreadable, signature row missing, and
//     evidence that does not read back: the session row's manifest or slots, an audit row's
//     data, a signature row's image, fields or consents; a certificate is never built with a
//     gap).
//     The brief asked for Permanent here, but funcproto drops every output of a Permanent
//     reply, and the spec wants the requester told that sealing failed;
//   - Permanent for a message that does not decode, lacks ids, names an unknown session or the
//     wrong tenant;
//   - a plain error, retried by the host and then poisoned, for storage, signer or timestamp
//     failures.
func (j *Job) Handle(ctx context.Context, msg funcproto.QueueMessage) error {
	var m esign.SealMessage
	if err := msg.Decode(&m); err != nil {
		return err
	}
	if m.GroupID == "" || m.TenantID == "" {
		return funcproto.Permanent(apperr.Invalid(funcproto.CodeInvalidMessage,
			apperr.Field("groupId", "groupId and tenantId are required")))
	}
	ctx, release, err := j.lock(ctx, m.GroupID)
	if err != nil {
		return err
	}
	defer release()
	return j.seal(ctx, m)
}

// lock takes the session's seal lock and renews it every third of LockTTL until release is
// called. The returned context ends when the lock is lost (the attempt stalled past LockTTL and
// another took over): the attempt then stops before it writes. Errors: ErrSealBusy while
// another attempt holds the lock (the message is retried: the holder may have died, and its
// lock expires within LockTTL); the store's.
func (j *Job) lock(ctx context.Context, groupID string) (context.Context, func(), error) {
	owner := newOwner()
	err := j.d.Sessions.LockSeal(ctx, groupID, owner, j.now(), j.d.LockTTL)
	if errors.Is(err, esign.ErrSealBusy) {
		funcproto.Logf(ctx, "seal: group %s is being sealed by another attempt; retried later", groupID)
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		ticks := j.renewTicks
		if ticks == nil {
			tick := time.NewTicker(j.d.LockTTL / 3)
			defer tick.Stop()
			ticks = tick.C
		}
		for {
			select {
			case <-done:
				return
			case <-ticks:
				err := j.d.Sessions.LockSeal(ctx, groupID, owner, j.now(), j.d.LockTTL)
				if j.afterRenew != nil {
					j.afterRenew()
				}
				if errors.Is(err, esign.ErrSealBusy) {
					cancel(fmt.Errorf("seal: the lock of group %s was lost: %w", groupID, err))
					return
				}
				// another renewal error (storage) is tried again at the next tick
			}
		}
	}()
	return ctx, func() {
		close(done)
		<-renewed
		cancel(nil)
		_ = j.d.Sessions.UnlockSeal(context.WithoutCancel(ctx), groupID, owner) // best effort: it expires anyway
	}, nil
}

func (j *Job) seal(ctx context.Context, m esign.SealMessage) error {
	sess, slots, err := j.load(ctx, m)
	var c *corruptSession
	if errors.As(err, &c) {
		return j.recordCorrupt(ctx, c)
	}
	if err != nil || sess == nil {
		return err
	}
	now := j.now()
	res, err := j.produce(ctx, sess, slots, now)
	var f *failure
	if errors.As(err, &f) {
		return j.recordFailure(ctx, sess, slots, now, f)
	}
	if err != nil {
		return err
	}
	if err := j.write(ctx, sess, res); err != nil {
		return err
	}
	if j.afterWrite != nil {
		if err := j.afterWrite(); err != nil {
			return err
		}
	}
	ch, err := j.complete(ctx, sess, slots, now)
	if err != nil || ch == nil {
		return err
	}
	if err := effects.EmitSealed(ctx, sess, ch.Effects); err != nil {
		return err
	}
	// The portal's copy of the slots' data is purged by its own job (processor/portalpurge).
	if err := effects.Send(ctx, queues.PortalPurge, esign.PurgeMessage{GroupID: sess.GroupID, TenantID: sess.TenantID}); err != nil {
		return err
	}
	if err := effects.Meter(ctx, j.d.Meter, licensing.KindSessionSealed, sess.TenantID, sess.GroupID); err != nil {
		return err
	}
	funcproto.Logf(ctx, "seal: group %s sealed and complete", sess.GroupID)
	j.purge(ctx, sess, slots)
	return nil
}

// corruptSession is load's error for a sealing session of the message's tenant whose row does
// not decode (its manifest or a slot): the seal can never succeed and is recorded as failed.
type corruptSession struct{ *esign.CorruptError }

// load reads the session and decides whether there is anything to do: nil session means ack.
// Errors: *corruptSession; Permanent for an unknown session or the wrong tenant; the store's.
func (j *Job) load(ctx context.Context, m esign.SealMessage) (*esign.Session, []esign.Slot, error) {
	sess, slots, err := j.d.Sessions.ToSeal(ctx, m.TenantID, m.GroupID)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, nil, funcproto.Permanent(err)
	}
	if errors.Is(err, esign.ErrWrongTenant) {
		return nil, nil, errWrongTenant()
	}
	var c *esign.CorruptError
	if errors.As(err, &c) {
		sess, err = c.Session, &corruptSession{c}
	}
	if sess == nil {
		return nil, nil, err
	}
	if err != nil && sess.State == esign.SessionSealing {
		return nil, nil, err
	}
	if err != nil {
		funcproto.Logf(ctx, "seal: group %s is %s and its row is unreadable (%s); message acknowledged", sess.GroupID, sess.State, c.Prop)
		return nil, nil, nil
	}
	switch sess.State {
	case esign.SessionSealing:
		return sess, slots, nil
	case esign.SessionComplete:
		funcproto.Logf(ctx, "seal: group %s is already complete; duplicate message acknowledged", sess.GroupID)
		j.purge(ctx, sess, slots) // finishes a clean-up an earlier attempt did not
	default:
		funcproto.Logf(ctx, "seal: group %s is %s, not sealing; message acknowledged", sess.GroupID, sess.State)
	}
	return nil, nil, nil
}

// sealed is one attempt's three outputs.
type sealed struct {
	signed, cert, evidence []byte
}

// produce gathers the inputs and runs the seal. Errors: *failure for what can never succeed,
// others worth a retry.
func (j *Job) produce(ctx context.Context, sess *esign.Session, slots []esign.Slot, now time.Time) (sealed, error) {
	events, err := j.d.Sessions.Trail(ctx, sess.GroupID)
	if errors.Is(err, audit.ErrCorrupt) {
		return sealed{}, fail("the audit trail is unreadable", err)
	}
	if err != nil {
		return sealed{}, err
	}
	sigs, err := j.signatures(ctx, sess, slots)
	if err != nil {
		return sealed{}, err
	}
	src, err := j.source(ctx, sess)
	if err != nil {
		return sealed{}, err
	}
	placements, page, err := layout(sess, slots, sigs)
	if err != nil {
		return sealed{}, err
	}
	bundle, head, err := evidenceBundle(events)
	if err != nil {
		return sealed{}, fail("the evidence bundle could not be built", err)
	}
	cert, err := buildCertificate(sess, slots, sigs, events, now, j.d.EngineVersion)
	if err != nil {
		return sealed{}, err
	}
	cert.EvidenceHeadHash = head
	out, err := pdf.Seal(ctx, pdf.SealInput{
		Source: src, Placements: placements, SignaturePage: page, Certificate: cert,
		Signer: j.d.Key.Signer, Chain: j.d.Key.Chain, TSAURL: j.d.TSAURL, Level: j.d.Level,
		SealName: "esign seal", SealReason: "Electronically signed; evidence certificate appended",
	})
	if apperr.KindOf(err) == apperr.KindInvalid || apperr.KindOf(err) == apperr.KindTooLarge {
		code := "invalid"
		if e, ok := apperr.As(err); ok {
			code = e.Code
		}
		return sealed{}, fail("the document cannot be sealed ("+code+")", err)
	}
	if err != nil {
		return sealed{}, fmt.Errorf("seal: signing: %w", err)
	}
	return sealed{signed: out.SignedPDF, cert: out.CertificatePDF, evidence: bundle}, nil
}

// signatures reads the stored signature of every signed slot.
func (j *Job) signatures(ctx context.Context, sess *esign.Session, slots []esign.Slot) (map[int]esign.StoredSignature, error) {
	out := map[int]esign.StoredSignature{}
	for _, sl := range slots {
		if sl.State != esign.SlotSigned {
			continue
		}
		sig, err := j.d.Sessions.Signature(ctx, sess.GroupID, sl.Index)
		if apperr.KindOf(err) == apperr.KindNotFound {
			return nil, fail(fmt.Sprintf("the signature of slot %d is missing", sl.Index), err)
		}
		if errors.Is(err, esign.ErrSignatureCorrupt) {
			return nil, fail(fmt.Sprintf("the signature of slot %d is unreadable", sl.Index), err)
		}
		if err != nil {
			return nil, err
		}
		out[sl.Index] = sig
	}
	return out, nil
}

// source reads the rendered PDF while hashing it and checks the hash given at creation.
func (j *Job) source(ctx context.Context, sess *esign.Session) ([]byte, error) {
	p, err := blobstore.ParsePath(sess.PDFBlobPath)
	if err != nil {
		return nil, fail("the source document path is invalid", err)
	}
	body, _, err := j.d.Blobs.Open(ctx, p.Container, p.Name)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, fail("the source document is missing", err)
	}
	if err != nil {
		return nil, err
	}
	defer body.Close()
	h := sha256.New()
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.TeeReader(io.LimitReader(body, pdf.MaxSourceBytes+1), h))
	if err != nil {
		return nil, fmt.Errorf("seal: reading the source document: %w", err)
	}
	if n > pdf.MaxSourceBytes {
		return nil, fail("the source document is larger than the seal accepts", nil)
	}
	got := "sha256:" + hex.EncodeToString(h.Sum(nil))
	if subtle.ConstantTimeCompare([]byte(got), []byte(strings.ToLower(sess.PDFHash))) != 1 {
		return nil, fail("the source document does not match its SHA-256 hash", nil)
	}
	return buf.Bytes(), nil
}

// write stores the three outputs, overwriting what an earlier, crashed attempt left.
func (j *Job) write(ctx context.Context, sess *esign.Session, r sealed) error {
	for _, b := range []struct {
		container, name, ctype string
		data                   []byte
	}{
		{ContainerEvidence, evidenceName(sess), "application/x-ndjson", r.evidence},
		{ContainerSigned, certName(sess), "application/pdf", r.cert},
		{ContainerSigned, signedName(sess), "application/pdf", r.signed},
	} {
		if err := j.put(ctx, b.container, b.name, b.ctype, b.data); err != nil {
			return fmt.Errorf("seal: writing %s: %w", b.container, err)
		}
	}
	return nil
}

func (j *Job) put(ctx context.Context, container, name, ctype string, data []byte) error {
	_, err := j.d.Blobs.Put(ctx, container, name, bytes.NewReader(data), ctype, nil)
	if apperr.KindOf(err) == apperr.KindNotFound { // the container does not exist yet
		if err := j.d.Blobs.EnsureContainer(ctx, container); err != nil {
			return err
		}
		_, err = j.d.Blobs.Put(ctx, container, name, bytes.NewReader(data), ctype, nil)
	}
	return err
}

// complete records the session as complete (esign.SessionJobs.CompleteSeal: one retry on a
// lost race). A nil change with no error means another attempt completed it first.
func (j *Job) complete(ctx context.Context, sess *esign.Session, slots []esign.Slot, now time.Time) (*esign.Change, error) {
	ch, err := j.d.Sessions.CompleteSeal(ctx, sess, slots, now,
		ContainerSigned+"/"+signedName(sess), ContainerSigned+"/"+certName(sess), ContainerEvidence+"/"+evidenceName(sess), systemActor)
	if errors.Is(err, esign.ErrNotSealing) {
		return nil, funcproto.Permanent(err) // no longer sealing (cannot happen: nothing else leaves sealing)
	}
	return ch, err
}

// recordFailure records seal.failed and queues the seal-failure notice; the message is
// acknowledged.
func (j *Job) recordFailure(ctx context.Context, sess *esign.Session, slots []esign.Slot, now time.Time, f *failure) error {
	funcproto.Logf(ctx, "seal: group %s cannot be sealed: %s", sess.GroupID, f.reason)
	ch, err := j.failSeal(ctx, sess, slots, now, f.reason)
	if err != nil || ch == nil {
		return err
	}
	return effects.EmitSealed(ctx, sess, ch.Effects)
}

// recordCorrupt records seal.failed on a session whose row does not decode, through the
// store's merge that leaves the unreadable part as found, and queues the seal-failure notice.
func (j *Job) recordCorrupt(ctx context.Context, c *corruptSession) error {
	sess := c.Session
	reason := "the stored session is unreadable (" + c.Prop + ")"
	funcproto.Logf(ctx, "seal: group %s cannot be sealed: %s", sess.GroupID, reason)
	ch, err := j.d.Sessions.FailCorrupt(ctx, c.CorruptError, j.now(), reason, systemActor)
	if errors.Is(err, esign.ErrAlreadyComplete) || errors.Is(err, esign.ErrNotSealing) {
		return funcproto.Permanent(err) // load checked the state: cannot happen
	}
	if err != nil {
		return err // a lost race or storage: the retry loads again
	}
	return effects.EmitSealed(ctx, sess, ch.Effects)
}

// failSeal records seal.failed (esign.SessionJobs.FailSealing: one retry on a lost race); nil
// change means there is nothing to record (the session is complete or no longer sealing).
func (j *Job) failSeal(ctx context.Context, sess *esign.Session, slots []esign.Slot, now time.Time, reason string) (*esign.Change, error) {
	return j.d.Sessions.FailSealing(ctx, sess, slots, now, reason, systemActor)
}

// purge deletes the signature rows of a complete session and records pii.purged
// (esign.SessionJobs.PurgeSignatures). It runs after the session is complete and never fails
// the message (the notices are already queued): what it could not delete is deleted when a
// later message for the session arrives.
func (j *Job) purge(ctx context.Context, sess *esign.Session, slots []esign.Slot) {
	err := j.d.Sessions.PurgeSignatures(ctx, sess, slots, j.now(), systemActor)
	var pe *esign.PurgeError
	if errors.As(err, &pe) {
		funcproto.Logf(ctx, "seal: group %s: %s failed: %s", sess.GroupID, pe.Step, errCode(pe.Err))
	} else if err != nil {
		funcproto.Logf(ctx, "seal: group %s: signature clean-up failed: %s", sess.GroupID, errCode(err))
	}
}

// errWrongTenant is the reply to a seal message naming another tenant's session.
func errWrongTenant() error {
	return funcproto.Permanent(apperr.New(apperr.KindInvalid, funcproto.CodeTenantMismatch,
		"the seal message's tenant is not the session's"))
}

// errCode is what a log line may say about err: its code, or its text for other errors (the
// store's errors carry no personal data).
func errCode(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Code
	}
	return err.Error()
}
