package workflowstore

import (
	"context"
	"time"

	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/workflow"
)

const prefixNotice = "notice-"

// SendNotice sends workflow x's notice key (the queue message id) once (row "notice-<key>" of
// its partition, the kernel's aggstore.Table.SendNotice): it claims the key, runs send and marks
// the key sent with the events send returns in one transaction; a failed send gives the claim
// back and is returned as is (workflow.Repo). Errors: kernel.ErrNoticeSent;
// kernel.ErrNoticeInFlight (also for a claim taken over while send ran); send's; the tablestore
// ones.
func (s *Store) SendNotice(ctx context.Context, x *workflow.Workflow, key string, now time.Time, lease time.Duration, send func() ([]kernel.Event, error)) error {
	return s.tab.SendNotice(ctx, x, prefixNotice+key, now, lease, send)
}

// Record writes audit events that change no state (a notice that failed for good).
func (s *Store) Record(ctx context.Context, id string, events []kernel.Event) error {
	return s.tab.Record(ctx, &workflow.Workflow{ID: id}, events)
}
