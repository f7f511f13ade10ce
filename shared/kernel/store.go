package kernel

import (
	"context"

	"github.com/esign-svc/esign/shared/apperr"
)

// Updater is the one Update shape of every aggregate store (issue 23): load the aggregate id
// once, run step on it, and store the change with its audit rows in one transaction on the
// aggregate's ETag, running step again on a lost race (a bounded number of times). A step
// error comes back with nothing written. A is what Update answers (the aggregate as stored), S
// the store's step (a transition of the domain's machine).
type Updater[A, S any] interface {
	Update(ctx context.Context, id string, step S) (A, Change, error)
}

// Errors of a notice sent once (every store's SendNotice: the claim row of the aggregate's
// partition, aggstore.Table.SendNotice). The domain packages' own names for them are these.
var (
	// ErrNoticeSent: the notice was sent (or skipped) before; acknowledge without sending again.
	ErrNoticeSent = &apperr.Error{Kind: apperr.KindConflict, Code: "notice_sent", Detail: "this notice was already sent"}
	// ErrNoticeInFlight: another worker holds the notice's claim (or took it over while this
	// one sent); try again later.
	ErrNoticeInFlight = &apperr.Error{Kind: apperr.KindUnavailable, Code: "notice_in_flight", Detail: "another worker is sending this notice now"}
)
