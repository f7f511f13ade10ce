package sessionstore

import (
	"context"

	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/azure/tablestore"
)

// ScrubEmailHash cuts an e-mail hash out of every audit event row of the session (erasure: the
// hash must not survive in the audit trail): the row's emailHash column and wherever else the
// row holds it, the data JSON of slot.invited, slot.signed and slot.reinvited included
// (audit.Scrub). The rows keep everything else. It reads the session's audit rows (a filter
// cannot look inside the data JSON) and answers how many rows it changed. Errors: the
// tablestore ones; audit.ErrCorrupt for a row whose data does not decode (nothing is written).
func (s *Store) ScrubEmailHash(ctx context.Context, groupID, hash string) (int, error) {
	if hash == "" {
		return 0, nil
	}
	rows, err := s.t.Query(ctx, groupID, &tablestore.QueryOptions{RowKeyPrefix: prefixEvent})
	if err != nil {
		return 0, err
	}
	var ops []tablestore.Op
	for _, r := range rows {
		set, err := audit.Scrub(r, hash)
		if err != nil {
			return 0, err
		}
		if set != nil {
			ops = append(ops, tablestore.MergeOp(tablestore.Entity{PartitionKey: groupID, RowKey: r.RowKey, ETag: "*", Props: set}))
		}
	}
	for start := 0; start < len(ops); start += tablestore.MaxBatchOps {
		if err := s.t.Transact(ctx, groupID, ops[start:min(start+tablestore.MaxBatchOps, len(ops))]); err != nil {
			return start, err
		}
	}
	return len(ops), nil
}
