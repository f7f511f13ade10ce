package aggstore

import "github.com/esign-svc/esign/shared/kernel"

// ClaimedOnce is how a store runs an effect under its Once claim (a notice sent once): claim,
// then the effect, then done with the audit events the effect returns; a failed effect gives
// the claim back through release (best effort: a claim left behind expires with its lease) and
// is returned as is. Errors: claim's; the effect's; done's.
func ClaimedOnce[C any](claim func() (C, error), effect func() ([]kernel.Event, error), done func(C, []kernel.Event) error, release func(C) error) error {
	c, err := claim()
	if err != nil {
		return err
	}
	events, err := effect()
	if err != nil {
		_ = release(c)
		return err
	}
	return done(c, events)
}
