package batchstore

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// prefixNotice marks the rows that record a batch notice's sending (one per notice kind).
const prefixNotice = "notice-"

// Errors of the notice claim (dispatch's).
var (
	// ErrNoticeSent: the notice was sent (or skipped) before; acknowledge without sending again.
	ErrNoticeSent = dispatch.ErrNoticeSent
	// ErrNoticeInFlight: another delivery of the message is sending the notice now.
	ErrNoticeInFlight = dispatch.ErrNoticeInFlight
)

// NoticeClaim is the right to send a batch's notice of one kind, held until CompleteNotice or
// ReleaseNotice.
type NoticeClaim struct {
	BatchID string
	Kind    string
	c       aggstore.Claim
}

// ClaimNotice records that the batch's notice of kind is being sent (row "notice-<kind>", the
// kernel's aggstore.Once). Errors: ErrNoticeSent; ErrNoticeInFlight for a claim younger than
// lease; the tablestore ones. A claim older than lease is taken over, so a notice goes out twice
// only when a worker dies after sending and before CompleteNotice.
func (s *Store) ClaimNotice(ctx context.Context, batchID, kind string, now time.Time, lease time.Duration) (NoticeClaim, error) {
	c, err := s.tab.Once().Claim(ctx, batchID, prefixNotice+kind, now, lease)
	switch {
	case errors.Is(err, aggstore.ErrOnceDone):
		return NoticeClaim{}, ErrNoticeSent
	case errors.Is(err, aggstore.ErrOnceBusy):
		return NoticeClaim{}, ErrNoticeInFlight
	case err != nil:
		return NoticeClaim{}, err
	}
	return NoticeClaim{BatchID: batchID, Kind: kind, c: c}, nil
}

// CompleteNotice marks the claimed notice sent and writes the events that audit it (state is
// not touched), in one transaction. Errors: ErrNoticeInFlight when the claim was taken over
// meanwhile; the tablestore ones.
func (s *Store) CompleteNotice(ctx context.Context, c NoticeClaim, events []dispatch.Event, now time.Time) error {
	err := s.tab.Record(ctx, &dispatch.Batch{BatchID: c.BatchID}, events, c.c.DoneOp(now))
	if apperr.KindOf(err) == apperr.KindPrecondition {
		return ErrNoticeInFlight
	}
	return err
}

// ReleaseNotice gives the claim up after a failed send. A claim already gone or taken over is
// not an error. Errors: the tablestore ones.
func (s *Store) ReleaseNotice(ctx context.Context, c NoticeClaim) error {
	return s.tab.Once().Release(ctx, c.c)
}

// SendNotice claims the batch's notice of kind (ClaimNotice), runs send and completes the
// claim with the events send returns (CompleteNotice); a failed send releases the claim and is
// returned as is (aggstore.ClaimedOnce; dispatch.BatchStore).
func (s *Store) SendNotice(ctx context.Context, batchID, kind string, now time.Time, lease time.Duration, send func() ([]dispatch.Event, error)) error {
	return aggstore.ClaimedOnce(func() (NoticeClaim, error) { return s.ClaimNotice(ctx, batchID, kind, now, lease) }, send,
		func(c NoticeClaim, events []dispatch.Event) error { return s.CompleteNotice(ctx, c, events, now) },
		func(c NoticeClaim) error { return s.ReleaseNotice(ctx, c) })
}

// StartAt is the continuation token of Records that lists from record index on.
func StartAt(index int) string {
	if index <= 0 {
		return ""
	}
	return recordKey(index - 1)
}
