package batchstore

import (
	"context"
	"time"

	"github.com/esign-svc/esign/shared/dispatch"
)

// prefixNotice marks the rows that record a batch notice's sending (one per notice kind).
const prefixNotice = "notice-"

// SendNotice sends batch b's notice of kind once (row "notice-<kind>" of its partition, the
// kernel's aggstore.Table.SendNotice): it claims the notice, runs send and marks the notice
// sent with the events send returns in one transaction; a failed send gives the claim back and
// is returned as is (dispatch.BatchStore). Errors: kernel.ErrNoticeSent; kernel.ErrNoticeInFlight;
// send's; the tablestore ones.
func (s *Store) SendNotice(ctx context.Context, b *dispatch.Batch, kind string, now time.Time, lease time.Duration, send func() ([]dispatch.Event, error)) error {
	return s.tab.SendNotice(ctx, b, prefixNotice+kind, now, lease, send)
}

// StartAt is the continuation token of Records that lists from record index on.
func StartAt(index int) string {
	if index <= 0 {
		return ""
	}
	return recordKey(index - 1)
}
