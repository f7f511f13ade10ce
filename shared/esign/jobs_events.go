package esign

import "context"

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

// Note records events that change no state (the session row and its ETag stay as they are),
// each stamped by who unless it names its own actor. Errors: the store's.
func (u *SessionJobs) Note(ctx context.Context, groupID string, slots []Slot, who Actor, events ...Event) error {
	ch := Change{Events: events}
	ch.By(who)
	return u.Store.RecordEvents(ctx, groupID, slots, ch)
}
