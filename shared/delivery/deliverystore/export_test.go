package deliverystore

import (
	"context"
	"strings"

	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/delivery"
)

// WriteOld stores s's root row as the store wrote it before the root had a RowKey of its own
// ("session"), without events.
func (st *Store) WriteOld(ctx context.Context, s *delivery.Session) error {
	e, err := sessionEntity(s)
	if err != nil {
		return err
	}
	_, err = st.tab.Rows().Insert(ctx, e)
	return err
}

// RootKeys are the RowKeys of the delivery's rows that are not audit or outbox rows.
func (st *Store) RootKeys(ctx context.Context, deliveryID string) ([]string, error) {
	rows, err := st.tab.Rows().Query(ctx, deliveryID, nil)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, r := range rows {
		if !strings.HasPrefix(r.RowKey, audit.RowPrefix) && !strings.HasPrefix(r.RowKey, "out-") {
			keys = append(keys, r.RowKey)
		}
	}
	return keys, nil
}
