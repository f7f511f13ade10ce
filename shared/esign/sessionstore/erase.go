package sessionstore

import (
	"context"

	"github.com/esign-svc/esign/shared/azure/tablestore"
)

// ScrubEmailHash removes an e-mail hash from every audit event row of the session that carries
// it (erasure: the hash must not survive in the audit trail). The rows keep everything else.
func (s *Store) ScrubEmailHash(ctx context.Context, groupID, hash string) (int, error) {
	if hash == "" {
		return 0, nil
	}
	rows, err := s.t.Query(ctx, groupID, &tablestore.QueryOptions{RowKeyPrefix: prefixEvent,
		Filter: "emailHash eq " + tablestore.Quote(hash)})
	if err != nil {
		return 0, err
	}
	for start := 0; start < len(rows); start += 100 {
		end := min(start+100, len(rows))
		ops := make([]tablestore.Op, 0, end-start)
		for _, r := range rows[start:end] {
			ops = append(ops, tablestore.MergeOp(tablestore.Entity{PartitionKey: groupID, RowKey: r.RowKey, ETag: "*",
				Props: map[string]any{"emailHash": ""}}))
		}
		if err := s.t.Transact(ctx, groupID, ops); err != nil {
			return start, err
		}
	}
	return len(rows), nil
}
