package tablestore

import (
	"context"

	"github.com/esign-svc/esign/shared/apperr"
)

// DeleteAll deletes every row of the partition that opts selects (RowKeyPrefix, Filter; Limit
// is ignored): it reads their keys with Each (a query page per 1,000 rows), then deletes them in
// transactions of up to MaxBatchOps. A row that another caller deleted meanwhile is no error (the
// transaction it failed is done again one row at a time). It answers how many rows it deleted.
// Errors: invalid_entity_key for an empty partitionKey (a transaction is one partition's); the
// query's and the deletes' (the rows deleted before stay deleted).
func (s *Store) DeleteAll(ctx context.Context, partitionKey string, opts *QueryOptions) (int, error) {
	if partitionKey == "" {
		return 0, apperr.Invalid(CodeInvalidKey, apperr.Field("PartitionKey", "is required: DeleteAll works in one partition"))
	}
	var q QueryOptions
	if opts != nil {
		q = *opts
	}
	q.Limit = 0
	var keys []string
	if err := s.Each(ctx, partitionKey, &q, func(e Entity) error { keys = append(keys, e.RowKey); return nil }); err != nil {
		return 0, err
	}
	n := 0
	for from := 0; from < len(keys); from += MaxBatchOps {
		part := keys[from:min(from+MaxBatchOps, len(keys))]
		ops := make([]Op, len(part))
		for i, k := range part {
			ops[i] = DeleteOp(k, "")
		}
		err := s.Transact(ctx, partitionKey, ops)
		if err == nil {
			n += len(part)
			continue
		}
		if apperr.KindOf(err) != apperr.KindNotFound {
			return n, err
		}
		for _, k := range part { // one of them is gone already: the rest one at a time
			err := s.Delete(ctx, partitionKey, k, "")
			switch {
			case err == nil:
				n++
			case apperr.KindOf(err) != apperr.KindNotFound:
				return n, err
			}
		}
	}
	return n, nil
}
