package dispatchjob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/notify"
)

// Notification kinds of the batch notices.
const (
	KindApprovers notify.Kind = "batch_pending_approval"
	KindFinished  notify.Kind = "batch_finished"
	// NoticeLease is how long a notice claim holds before another delivery may take it over.
	NoticeLease = 5 * time.Minute
)

// HandleNotify is the DispatchNotify queue function (dispatch.NotifyMessage): kind approvers
// e-mails the batch summary to each approver (the batch's approversEmail, else
// DISPATCH_APPROVERS); kind finished e-mails the outcome to the submitter. Each notice is
// claimed once per batch (a redelivered message sends nothing) and audited as
// batch.notice_sent with its kind and recipient count, or batch.notice_skipped when there is
// nobody to send it to. Errors: Permanent for an unknown kind or an unreadable address; a
// provider refusal is Permanent (the claim is released); others are retried.
func (j *Job) HandleNotify(ctx context.Context, qm funcproto.QueueMessage) error {
	var m dispatch.NotifyMessage
	if err := qm.Decode(&m); err != nil {
		return err
	}
	if m.Kind != dispatch.NoticeApprovers && m.Kind != dispatch.NoticeFinished {
		return funcproto.Permanent(apperr.Invalid(funcproto.CodeInvalidMessage, apperr.Field("kind", "must be approvers or finished")))
	}
	if j.Email == nil {
		return funcproto.Permanent(apperr.New(apperr.KindInternal, "no_email_provider", "the processor has no e-mail provider"))
	}
	b, err := j.load(ctx, m.BatchID, m.TenantID)
	if err != nil || b == nil {
		return err
	}
	to, err := j.recipients(b, m.Kind)
	if err != nil {
		return funcproto.Permanent(err)
	}
	err = j.batches().Notice(ctx, b, m.Kind, systemActor, NoticeLease, func() (int, error) {
		for i, addr := range to {
			msg := compose(b, m.Kind, addr)
			if err := j.Email.Send(notify.WithDedupeID(ctx, fmt.Sprintf("batch-%s-%s-%d", b.BatchID, m.Kind, i)), msg); err != nil {
				if apperr.KindOf(err) == apperr.KindInvalid {
					return 0, funcproto.Permanent(err)
				}
				return 0, err
			}
		}
		return len(to), nil
	})
	if errors.Is(err, dispatch.ErrNoticeSent) {
		funcproto.Logf(ctx, "dispatch-notify: batch %s: %s notice sent before; acknowledged", b.BatchID, m.Kind)
		return nil
	}
	if err != nil {
		return err
	}
	funcproto.Logf(ctx, "dispatch-notify: batch %s: %s notice to %d recipient(s)", b.BatchID, m.Kind, len(to))
	return nil
}

// recipients are the notice's addresses: the approvers (the batch's, else the setting's), or
// the submitter; none is an empty list.
func (j *Job) recipients(b *dispatch.Batch, kind string) ([]string, error) {
	if kind == dispatch.NoticeFinished {
		if b.SubmitterEmailEnc == "" {
			return nil, nil
		}
		to, err := j.Cipher.DecryptString(b.SubmitterEmailEnc, dispatch.SubmitterAAD(b.BatchID))
		return []string{to}, err
	}
	if b.ApproversEnc == "" {
		return j.Approvers, nil
	}
	raw, err := j.Cipher.Decrypt(b.ApproversEnc, dispatch.ApproversAAD(b.BatchID))
	if err != nil {
		return nil, err
	}
	var to []string
	if err := json.Unmarshal(raw, &to); err != nil {
		return nil, apperr.Wrap(err, apperr.KindInternal, "approvers_unreadable", "the batch's approvers do not decode")
	}
	return to, nil
}

// compose is the notice's e-mail: plain text, no link (the approver decides through the API).
func compose(b *dispatch.Batch, kind, to string) notify.Message {
	var sb strings.Builder
	title := oneLine(b.Title)
	if title == "" {
		title = b.BatchID
	}
	fmt.Fprintf(&sb, "Batch: %s\nBatch id: %s\nTemplate: %s (version %d)\n", title, b.BatchID, oneLine(b.TemplateName), b.TemplateVersion)
	fmt.Fprintf(&sb, "Records: %d submitted, %d ready, %d invalid, %d with warnings\n", b.DocumentCount, b.ReadyCount, b.FailedCount, b.WarningCount)
	m := notify.Message{Channel: notify.Email, To: to, CorrelationID: b.CorrelationID}
	if kind == dispatch.NoticeApprovers {
		fmt.Fprintf(&sb, "Dispatch readiness: %s\n\nThe batch waits for a decision: approve, reject or request changes through the dispatch API (POST /api/dispatch/batch/%s/decide).\n", b.Readiness, b.BatchID)
		m.Kind, m.Subject = KindApprovers, "Batch waiting for approval: "+title
	} else {
		fmt.Fprintf(&sb, "Outcome: %s\nProcessed: %d, failed: %d\n", b.State, b.ProcessedCount, b.ErrorCount)
		if b.CombinedPath != "" {
			fmt.Fprintf(&sb, "Combined PDF: %s\n", b.CombinedPath)
		}
		if b.BundlePath != "" {
			fmt.Fprintf(&sb, "ZIP bundle: %s\n", b.BundlePath)
		}
		m.Kind, m.Subject = KindFinished, "Batch "+string(b.State)+": "+title
	}
	m.Text = sb.String()
	return m
}

// oneLine keeps a stored text on one line of an e-mail.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
