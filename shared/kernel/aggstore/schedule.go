package aggstore

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/kernel"
)

// Schedule is a time index in an Index table (the expiry of live sessions): an entry (an id due
// at a time) sits in the partition of its hour and one of Shards shards chosen by the id's hash,
// so that the writes of one busy hour spread over Shards partitions instead of one. A watermark
// row remembers the oldest hour that may still hold entries; Due reads from there to now (one
// query per hour and shard) and moves the watermark past hours it found empty.
type Schedule struct {
	x      *Index
	name   string
	shards int
}

// ScheduleShards is the number of shards of each hour.
const ScheduleShards = 16

// NewSchedule is the schedule called name in x.
func NewSchedule(x *Index, name string) *Schedule {
	return &Schedule{x: x, name: name, shards: ScheduleShards}
}

// Item is one due entry (kernel.Due).
type Item = kernel.Due

const hourLayout = "2006010215"

func (s *Schedule) partition(at time.Time, id string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return s.hourPartition(at, int(h.Sum32()%uint32(s.shards)))
}

func (s *Schedule) hourPartition(at time.Time, shard int) string {
	return fmt.Sprintf("%s-%s-%02d", s.name, at.UTC().Format(hourLayout), shard)
}

func rowKey(at time.Time, id string) string { return fmt.Sprintf("%020d-%s", at.UnixNano(), id) }

func (s *Schedule) markKey() (string, string) { return s.name + "-mark", "mark" }

// Start writes the watermark when there is none yet (at now's hour): call it once when the app
// starts, before anything is added, so that no entry is ever older than the watermark.
func (s *Schedule) Start(ctx context.Context, now time.Time) error {
	pk, rk := s.markKey()
	_, err := s.x.t.Insert(ctx, tablestore.Entity{PartitionKey: pk, RowKey: rk,
		Props: map[string]any{"hourNs": now.UTC().Truncate(time.Hour).UnixNano()}})
	if apperr.KindOf(err) == apperr.KindConflict {
		return nil
	}
	return err
}

// Add puts id at time at (one upsert).
func (s *Schedule) Add(ctx context.Context, id string, at time.Time) error {
	_, err := s.x.t.Upsert(ctx, tablestore.Entity{PartitionKey: s.partition(at, id), RowKey: rowKey(at, id),
		Props: map[string]any{"id": id, "atNs": at.UnixNano()}})
	return err
}

// Remove deletes id's entry at time at; a missing entry is no error.
func (s *Schedule) Remove(ctx context.Context, id string, at time.Time) error {
	err := s.x.t.Delete(ctx, s.partition(at, id), rowKey(at, id), "")
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil
	}
	return err
}

// Due lists up to limit entries whose time is at or before now, oldest hours first. Hours
// before now's that it finds empty move the watermark on. Errors: the tablestore ones.
func (s *Schedule) Due(ctx context.Context, now time.Time, limit int) ([]Item, error) {
	pk, rk := s.markKey()
	mark, err := s.x.t.Get(ctx, pk, rk)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, s.Start(ctx, now)
	}
	if err != nil {
		return nil, err
	}
	upper := fmt.Sprintf("%020d~", now.UnixNano())
	current := now.UTC().Truncate(time.Hour)
	var out []Item
	emptyTo := time.Time{}
	allEmpty := true
	for hour := time.Unix(0, mark.Int64("hourNs")).UTC(); !hour.After(current) && len(out) < limit; hour = hour.Add(time.Hour) {
		found := 0
		for shard := 0; shard < s.shards && len(out) < limit; shard++ {
			rows, err := s.x.t.Query(ctx, s.hourPartition(hour, shard), &tablestore.QueryOptions{
				Filter: "RowKey lt " + tablestore.Quote(upper), Limit: limit - len(out)})
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				out = append(out, Item{ID: r.String("id"), At: time.Unix(0, r.Int64("atNs")).UTC()})
			}
			found += len(rows)
		}
		if found > 0 || !hour.Before(current) {
			allEmpty = false
		}
		if allEmpty {
			emptyTo = hour.Add(time.Hour)
		}
	}
	if !emptyTo.IsZero() {
		mark.Props["hourNs"] = emptyTo.UnixNano()
		if _, err := s.x.t.Replace(ctx, mark); err != nil && apperr.KindOf(err) != apperr.KindPrecondition {
			return out, err
		}
	}
	return out, nil
}

// RemoveDue deletes every entry of id due at or before now, wherever its time put it (for an
// id whose aggregate was never written): one query per hour since the watermark, in id's shard.
func (s *Schedule) RemoveDue(ctx context.Context, id string, now time.Time) error {
	pk, rk := s.markKey()
	mark, err := s.x.t.Get(ctx, pk, rk)
	if err != nil {
		return err
	}
	upper := fmt.Sprintf("%020d~", now.UnixNano())
	for hour := time.Unix(0, mark.Int64("hourNs")).UTC(); !hour.After(now.UTC()); hour = hour.Add(time.Hour) {
		p := s.partition(hour, id)
		rows, err := s.x.t.Query(ctx, p, &tablestore.QueryOptions{
			Filter: "RowKey lt " + tablestore.Quote(upper) + " and id eq " + tablestore.Quote(id)})
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := s.x.t.Delete(ctx, p, r.RowKey, ""); err != nil && apperr.KindOf(err) != apperr.KindNotFound {
				return err
			}
		}
	}
	return nil
}

// DefaultCheckAfter is the delay of a follow-up check (the invitation checks) when the app sets
// none.
const DefaultCheckAfter = 10 * time.Minute

// Checks is a schedule of follow-up checks, each due a fixed delay after the change that asked
// for it (the invitation checks: a change that invites schedules one before it is written; a
// job takes the due ones and removes each once checked).
type Checks struct {
	*Schedule
	after time.Duration
}

// NewChecks is the check schedule called name in x, due after (> 0) past each change.
func NewChecks(x *Index, name string, after time.Duration) *Checks {
	return &Checks{Schedule: NewSchedule(x, name), after: after}
}

// SetAfter changes the delay (d > 0; call it while wiring, before use).
func (c *Checks) SetAfter(d time.Duration) {
	if d > 0 {
		c.after = d
	}
}

// After adds a check of id due the delay after changedAt (one upsert).
func (c *Checks) After(ctx context.Context, id string, changedAt time.Time) error {
	return c.Add(ctx, id, changedAt.Add(c.after))
}

// Forget removes a checked entry; a missing one is no error.
func (c *Checks) Forget(ctx context.Context, it Item) error { return c.Remove(ctx, it.ID, it.At) }
