package esign

import (
	"context"
	"time"
)

// Get is tenant's session groupID with its slots, for a job that acts on it outside the store
// (a portal call, an e-mail). Errors: ErrSessionNotFound; ErrWrongTenant; the store's (*CorruptError
// for a row that does not decode, whichever its tenant).
func (u *SessionJobs) Get(ctx context.Context, tenant, groupID string) (*Session, []Slot, error) {
	return u.own(ctx, tenant, groupID)
}

// Recorded reports whether the session's trail holds an event of kind whose data says what
// ("what": the pii.* events of the seal and of the portal purge tell their subjects apart so).
// Errors: the store's.
func (u *SessionJobs) Recorded(ctx context.Context, groupID, kind, what string) (bool, error) {
	evs, err := u.Store.Events(ctx, groupID)
	if err != nil {
		return false, err
	}
	for _, e := range evs {
		if e.Kind == kind && e.Data["what"] == what {
			return true, nil
		}
	}
	return false, nil
}

// Note records one session-level event (slot -1) of kind with data, by who at now, changing no
// state (the session row and its ETag stay as they are). Errors: the store's.
func (u *SessionJobs) Note(ctx context.Context, groupID string, slots []Slot, kind string, data map[string]any, now time.Time, who Actor) error {
	return u.record(ctx, groupID, slots, kind, data, now, who)
}
