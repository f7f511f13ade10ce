package kernel

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Due is one due entry of a follow-up schedule (the invitation checks): the aggregate's id and
// the time the entry was due (aggstore.Item is this type).
type Due struct {
	ID string
	At time.Time
}

// DueChecks is a schedule of follow-up checks (aggstore.Checks): the entries due by now, and
// forgetting one once checked.
type DueChecks interface {
	Due(ctx context.Context, now time.Time, limit int) ([]Due, error)
	Forget(ctx context.Context, it Due) error
}

// ErrCheckAgain is a check that found its work being done elsewhere right now (another worker
// holds the claim): no failure, but the entry stays, so a later run sees the work recorded.
var ErrCheckAgain = errors.New("kernel: checked again next run")

// CheckRun counts what one run of a schedule did.
type CheckRun struct {
	Checked int      // aggregates whose due entries were taken (and forgotten)
	Sent    int      // what the checks found undone and did
	Again   []string // aggregates whose check answered ErrCheckAgain, in order
}

// RunDue takes up to limit entries of c due by now, groups them by aggregate, checks each
// aggregate once (check answers how much it did) and forgets its entries when the check
// succeeded. A failed check keeps the aggregate's entries for the next run and does not stop
// the others; the errors come back joined, each prefixed with its id.
func RunDue(ctx context.Context, c DueChecks, now time.Time, limit int, check func(ctx context.Context, id string) (int, error)) (CheckRun, error) {
	var r CheckRun
	items, err := c.Due(ctx, now, limit)
	if err != nil {
		return r, err
	}
	var order []string
	byID := map[string][]Due{}
	for _, it := range items {
		if _, seen := byID[it.ID]; !seen {
			order = append(order, it.ID)
		}
		byID[it.ID] = append(byID[it.ID], it)
	}
	var errs []error
	for _, id := range order {
		sent, err := check(ctx, id)
		r.Sent += sent
		if errors.Is(err, ErrCheckAgain) {
			r.Again = append(r.Again, id)
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		r.Checked++
		for _, it := range byID[id] {
			if err := c.Forget(ctx, it); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", id, err))
			}
		}
	}
	return r, errors.Join(errs...)
}
