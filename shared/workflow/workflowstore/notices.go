package workflowstore

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
	"github.com/esign-svc/esign/shared/workflow"
)

// Errors of ClaimNotice (the workflow's).
var (
	ErrNoticeSent     = workflow.ErrNoticeSent
	ErrNoticeInFlight = workflow.ErrNoticeInFlight
)

const prefixNotice = "notice-"

// NoticeClaim is the right to send one workflow notice (one queue message), held until
// CompleteNotice or ReleaseNotice.
type NoticeClaim struct{ c aggstore.Claim }

// ClaimNotice records that the workflow's notice key (the queue message id) is being sent (row
// "notice-<key>" of the workflow's partition, the kernel's aggstore.Once). Errors:
// ErrNoticeSent; ErrNoticeInFlight for a claim younger than lease; the tablestore ones.
func (s *Store) ClaimNotice(ctx context.Context, id, key string, now time.Time, lease time.Duration) (NoticeClaim, error) {
	c, err := s.tab.Once().Claim(ctx, id, prefixNotice+key, now, lease)
	switch {
	case errors.Is(err, aggstore.ErrOnceDone):
		return NoticeClaim{}, ErrNoticeSent
	case errors.Is(err, aggstore.ErrOnceBusy):
		return NoticeClaim{}, ErrNoticeInFlight
	}
	return NoticeClaim{c: c}, err
}

// CompleteNotice marks the claimed notice sent and writes the events that audit it (the
// workflow row is not touched), in one transaction. Errors: ErrNoticeInFlight when the claim
// was taken over meanwhile; the tablestore ones.
func (s *Store) CompleteNotice(ctx context.Context, c NoticeClaim, events []kernel.Event, now time.Time) error {
	err := s.tab.Record(ctx, &workflow.Workflow{ID: c.c.ID}, events, c.c.DoneOp(now))
	if apperr.KindOf(err) == apperr.KindPrecondition {
		return ErrNoticeInFlight
	}
	return err
}

// ReleaseNotice gives the claim up after a failed send. Errors: the tablestore ones.
func (s *Store) ReleaseNotice(ctx context.Context, c NoticeClaim) error {
	return s.tab.Once().Release(ctx, c.c)
}

// SendNotice claims the notice key (ClaimNotice), runs send and completes the claim with the
// events send returns (CompleteNotice); a failed send releases the claim and is returned as is
// (aggstore.ClaimedOnce; workflow.Repo).
func (s *Store) SendNotice(ctx context.Context, id, key string, now time.Time, lease time.Duration, send func() ([]kernel.Event, error)) error {
	return aggstore.ClaimedOnce(func() (NoticeClaim, error) { return s.ClaimNotice(ctx, id, key, now, lease) }, send,
		func(c NoticeClaim, events []kernel.Event) error { return s.CompleteNotice(ctx, c, events, now) },
		func(c NoticeClaim) error { return s.ReleaseNotice(ctx, c) })
}

// Record writes audit events that change no state (a notice that failed for good).
func (s *Store) Record(ctx context.Context, id string, events []kernel.Event) error {
	return s.tab.Record(ctx, &workflow.Workflow{ID: id}, events)
}
