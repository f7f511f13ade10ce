// Package licenceusage is the processor's metering job (DESIGN 19): the apps queue a
// licensing.UsageMessage on "licence-usage" (output binding "usage") where a session is sealed,
// a delivery created, a batch record group made (one message for the group's records) and a
// workflow sealed; this job posts each record to the licensing service's POST /v1/usage. The
// service is idempotent by the record's id (stable for the event), so a retry or a second
// message for one event is one record there.
//
// Nothing is lost: a record the service does not take (unreachable, time-out, any answer but
// 2xx) and a record this processor cannot send (LICENSING_URL unset here) fail the invocation,
// so the host retries it and, after maxDequeueCount attempts, moves it to
// "licence-usage-poison", where it stays for the operator to queue again. There is no poison
// function: one that acknowledged would drop the record. Only a message that is no usage record
// (it does not decode, or fails UsageMessage.Validate) is acknowledged with a log line.
package licenceusage

import (
	"context"
	"errors"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/licensing"
)

// FunctionName is the queue function (processor/functions/LicenceUsage).
const FunctionName = "LicenceUsage"

// Recorder posts a usage record (*licensing.Client).
type Recorder interface {
	Record(ctx context.Context, u licensing.Usage) error
}

var _ Recorder = (*licensing.Client)(nil)

// errNotConfigured fails a record this processor has no service to send to (retried, then
// kept in the poison queue).
var errNotConfigured = errors.New("licence-usage: LICENSING_URL is not set on the processor; the record is kept for retry")

// Deps are the metering job's dependencies. A nil Service is a processor without LICENSING_URL.
type Deps struct {
	Service Recorder
}

// Job is the metering job (New builds it).
type Job struct{ Deps }

// New makes the job. It does no I/O; it has no required dependency (the error is nil).
func New(d Deps) (*Job, error) {
	return &Job{Deps: d}, nil
}

// Functions is the job's function table: the licence-usage queue.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{
		{Name: FunctionName, Handler: funcproto.QueueHandler(j.Handle)},
	}
}

// Handle is the licence-usage queue function. Replies (through funcproto.QueueHandler): nil
// once the service took every record of the message (posted in order, one call each); Permanent for a message that is no usage record; a plain
// error (retried, then poisoned) when the service did not take it or none is configured.
func (j *Job) Handle(ctx context.Context, qm funcproto.QueueMessage) error {
	var m licensing.UsageMessage
	if err := qm.Decode(&m); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return funcproto.Permanent(err)
	}
	if j.Service == nil {
		return errNotConfigured
	}
	for _, u := range m.All() { // a retry posts the group again: the service keeps an id once
		if err := j.Service.Record(ctx, u); err != nil {
			funcproto.Logf(ctx, "licence-usage: %s %s not recorded (attempt %d); will retry", u.Kind, u.ID, qm.DequeueCount)
			return err
		}
		funcproto.Logf(ctx, "licence-usage: %s %s recorded", u.Kind, u.ID)
	}
	return nil
}
