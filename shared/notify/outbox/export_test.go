package outbox

import "time"

// SetClock sets the outbox's clock, for the tests in package outbox_test (which get their
// outbox from storetest).
func (o *Outbox) SetClock(now func() time.Time) { o.now = now }
