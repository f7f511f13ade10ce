package batchstore

import (
	"context"

	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// IntakeSchedule is the name of the schedule of intakes under way in the index table (issue
// 26): the intake puts its batch on it, due dispatch.IntakeSafeAge later, before it stores the
// first chunk of record rows (partitions intake-<yyyymmddhh>-<shard>, watermark intake-mark).
// The processor's ExpireSessions timer takes the due entries (dispatch.IntakeSweep): a batch
// with a batch row is left alone, one without has its record rows and blobs deleted. CreateBatch
// leaves the entry for the sweep (no call added to the intake's last step).
const IntakeSchedule = "intake"

// Intakes is the schedule of intakes under way (dispatch.Intake.Intakes,
// dispatch.IntakeSweep.Schedule).
func (s *Store) Intakes() *aggstore.Checks { return s.intakes }

// DeleteRecords deletes the record rows of a batch (rec-*; a page query per 1,000 rows and a
// transaction per 100 deletes: tablestore.DeleteAll) and answers how many it deleted. It is
// the clean-up of an intake that never wrote its batch row: the caller checks that there is
// none. Errors: the tablestore ones (the rows deleted before stay deleted; run it again).
func (s *Store) DeleteRecords(ctx context.Context, batchID string) (int, error) {
	if batchID == "" {
		return 0, ErrNotFound
	}
	return s.tab.Rows().DeleteAll(ctx, batchID, &tablestore.QueryOptions{RowKeyPrefix: prefixRecord})
}
