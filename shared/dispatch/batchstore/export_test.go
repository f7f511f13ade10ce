package batchstore

import (
	"context"

	"github.com/esign-svc/esign/shared/dispatch"
)

// Hints are the state hints of the tenant's member rows by batch id ("": none), with whether
// each row has its creation time.
func (s *Store) Hints(ctx context.Context, tenant string) (map[string]string, map[string]bool, error) {
	ms, err := s.index.Members(ctx, tenantKey(tenant))
	if err != nil {
		return nil, nil, err
	}
	hints, timed := map[string]string{}, map[string]bool{}
	for _, m := range ms {
		hints[m.String("member")] = m.String(propState)
		timed[m.String("member")] = m.Int64(propCreated) != 0
	}
	return hints, timed, nil
}

// SetHint writes a member row's hint as a lost or late merge would have left it.
func (s *Store) SetHint(ctx context.Context, tenant, batchID string, state dispatch.State) error {
	return s.index.SetMember(ctx, tenantKey(tenant), batchID, map[string]any{propState: string(state)})
}

// OldMember rewrites a member row as it was before the state hint (withTime) or before the
// creation time too.
func (s *Store) OldMember(ctx context.Context, b *dispatch.Batch, withTime bool) error {
	props := map[string]any{}
	if withTime {
		props[propCreated] = b.CreatedAt.UnixNano()
	}
	return s.index.AddMember(ctx, tenantKey(b.TenantID), b.BatchID, props)
}

// ForgetGroup rewrites a batch row as it was before it recorded its record group.
func (s *Store) ForgetGroup(ctx context.Context, batchID string) error {
	e, err := s.tab.Rows().Get(ctx, batchID, rowBatch)
	if err != nil {
		return err
	}
	delete(e.Props, "recordsPerMessage")
	_, err = s.tab.Rows().Replace(ctx, e)
	return err
}
