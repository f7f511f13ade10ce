package sessionstore

import (
	"context"

	"github.com/esign-svc/esign/shared/esign"
)

var _ esign.SessionReadStore = (*Store)(nil)

// Timeline is the session's audit events as the status answer shows them, oldest first: the
// kind, the slot (-1 for none) and the time of each; no actor, no data (issue 23: the read
// side, esign.SessionReads, takes it in the domain's terms).
func (s *Store) Timeline(ctx context.Context, groupID string) ([]esign.Event, error) {
	rows, err := s.Events(ctx, groupID)
	if err != nil {
		return nil, err
	}
	out := make([]esign.Event, 0, len(rows))
	for _, r := range rows {
		out = append(out, esign.Event{Kind: r.Kind, Slot: r.Slot, At: r.At})
	}
	return out, nil
}
