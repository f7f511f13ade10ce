package kernel

import "time"

// Record is one audit event as stored (shared/audit writes and reads it; audit.Record is this
// type). Slot is -1 for events not about one slot. It lives here so that a domain package can
// read an aggregate's trail through its own store interface without importing the table
// adapter (issue 23).
type Record struct {
	Seq       string         `json:"-"` // the RowKey
	Kind      string         `json:"kind"`
	At        time.Time      `json:"at"`
	Slot      int            `json:"slot"`
	ActorKind string         `json:"actorKind"`
	ActorID   string         `json:"actorId,omitempty"`
	IP        string         `json:"ip,omitempty"`
	UserAgent string         `json:"userAgent,omitempty"`
	EmailHash string         `json:"emailHash,omitempty"`
	Data      map[string]any `json:"data,omitempty"`
}
