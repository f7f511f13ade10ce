// Package kernel is what every aggregate of the service (signing sessions, deliveries, render
// documents, dispatch batches and workflows) shares in its pure state machine: the audit
// Event a transition records, the Actor who caused it, the Effects it asks for, and the Change
// that carries them from the machine to the store. It imports no storage: a machine returns a
// Change, a store (kernel/aggstore) writes the aggregate's rows and the change's events in one
// transaction, and only then does an app carry out the effects.
package kernel

import (
	"slices"
	"time"
)

// NoSlot is the Slot of an event or effect about the whole aggregate, not one of its children.
const NoSlot = -1

// Actor is who caused an event: the kind ("initiator", "signer", "recipient", "portal", "admin",
// "system"), an id that is not personal data (the JWT oid, a slot's sessionId, a job name), and
// the request's IP and user agent when there was a request.
type Actor struct {
	Kind      string
	ID        string
	IP        string
	UserAgent string
}

// Event is one audit event a transition produces. Slot is NoSlot for events about the whole
// aggregate. Data holds no personal data other than what the audit trail is meant to carry
// (hashes, ids, IPs, user agents).
type Event struct {
	Kind  string
	Slot  int
	At    time.Time
	Actor Actor
	Data  map[string]any
}

// EffectKind is something a transition asks the app to do after the change is stored. Each
// aggregate names its own kinds; an app's interpreter refuses a kind it does not know.
type EffectKind string

// Effect is one follow-up action, about child Slot (NoSlot for the whole aggregate).
type Effect struct {
	Kind EffectKind
	Slot int
}

// Change is what a transition produced: the children it changed (indexes, sorted, once each),
// its audit events in order, and its effects. The store writes the aggregate, the changed
// children and the events in one transaction; the effects are carried out after that.
type Change struct {
	Slots   []int
	Events  []Event
	Effects []Effect
}

// By stamps every event of the change that has no actor yet with a: an actor a transition set
// itself (a signer acting through the portal inside a system job, say) is kept.
func (c *Change) By(a Actor) *Change {
	for i := range c.Events {
		if c.Events[i].Actor.Kind == "" {
			c.Events[i].Actor = a
		}
	}
	return c
}

// Touch marks child i as changed.
func (c *Change) Touch(i int) {
	if j, found := slices.BinarySearch(c.Slots, i); !found {
		c.Slots = slices.Insert(c.Slots, j, i)
	}
}

// Record appends an audit event (slot NoSlot for the whole aggregate).
func (c *Change) Record(kind string, slot int, at time.Time, data map[string]any) {
	c.Events = append(c.Events, Event{Kind: kind, Slot: slot, At: at, Data: data})
}

// Ask appends an effect.
func (c *Change) Ask(kind EffectKind, slot int) {
	c.Effects = append(c.Effects, Effect{Kind: kind, Slot: slot})
}

// Asks reports whether the change asks for an effect of kind.
func (c Change) Asks(kind EffectKind) bool {
	return slices.ContainsFunc(c.Effects, func(e Effect) bool { return e.Kind == kind })
}

// Merge appends o's children, events and effects to c (a use case that runs two transitions in
// one transaction).
func (c *Change) Merge(o Change) {
	for _, i := range o.Slots {
		c.Touch(i)
	}
	c.Events = append(c.Events, o.Events...)
	c.Effects = append(c.Effects, o.Effects...)
}

// Empty reports whether the change has nothing to write and nothing to do.
func (c Change) Empty() bool { return len(c.Events) == 0 && len(c.Slots) == 0 && len(c.Effects) == 0 }

// Nanos is t in Unix nanoseconds, 0 for the zero time: how every aggregate stores a time.
func Nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// FromNanos reverses Nanos (UTC).
func FromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// Published is one integrator event (DESIGN 17) as its aggregate's outbox row keeps it until it
// is fanned out: written with the change that made it, in the same transaction. It holds ids,
// a state and times only.
type Published struct {
	ID          string    // the event id: the same on every delivery attempt
	Type        string    // the event type ("session.completed")
	TenantID    string    // the aggregate's tenant
	Object      string    // the aggregate kind ("session")
	AggregateID string    // the aggregate's id (a groupId, a batchId)
	Slot        int       // NoSlot unless the event is about one child
	State       string    // the aggregate's state after the change ("" when the kind has none)
	At          time.Time // when it happened
}
