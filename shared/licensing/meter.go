package licensing

import "time"

// Meter says whether usage records are queued on the licence-usage queue (effects.Meter queues
// them through the invocation's output binding, so a record leaves exactly when the change it
// meters is stored: the host writes outputs only with the function's success). The zero Meter,
// a deployment without LICENSING_URL, queues nothing: no one is there to tell.
type Meter struct {
	On  bool
	Now func() time.Time // the records' "at"; default time.Now
}

// Record is the record of kind for tenantID's object named by parts (NewUsage) at m.Now, and
// whether m is on.
func (m Meter) Record(kind Kind, tenantID string, parts ...string) (Usage, bool) {
	if !m.On {
		return Usage{}, false
	}
	return NewUsage(kind, tenantID, m.now(), parts...), true
}

// now is m.Now(), or time.Now() without it.
func (m Meter) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Records are the records of kind for tenantID's objects, one named by each entry of names
// (NewUsage), all at one m.Now, and whether m is on.
func (m Meter) Records(kind Kind, tenantID string, names [][]string) ([]Usage, bool) {
	if !m.On {
		return nil, false
	}
	at := m.now()
	us := make([]Usage, len(names))
	for i, parts := range names {
		us[i] = NewUsage(kind, tenantID, at, parts...)
	}
	return us, true
}
