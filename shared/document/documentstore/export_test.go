package documentstore

import (
	"context"

	"github.com/esign-svc/esign/shared/document"
)

// WriteOld stores d's row as the store wrote it before its root had a RowKey of its own
// ("document"), without events.
func (s *Store) WriteOld(ctx context.Context, d *document.Document) error {
	e, err := encode(d)
	if err != nil {
		return err
	}
	_, err = s.tab.Rows().Insert(ctx, e)
	return err
}

// RootKeys are the RowKeys of the document's rows that are not audit rows.
func (s *Store) RootKeys(ctx context.Context, tenant, correlationID string) ([]string, error) {
	rows, err := s.tab.Rows().Query(ctx, partition(tenant, correlationID), nil)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, r := range rows {
		if r.RowKey[:4] != "evt-" {
			keys = append(keys, r.RowKey)
		}
	}
	return keys, nil
}
