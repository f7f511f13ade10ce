package otp

import "time"

// Record is State as stored (inside a session or delivery row, as JSON): times in Unix
// nanoseconds, the code only as its keyed hash. Every aggregate with an OTP stores this one form.
type Record struct {
	Channel      string `json:"channel,omitempty"`
	Destination  string `json:"destination,omitempty"`
	CodeHash     string `json:"codeHash,omitempty"`
	SentAtNs     int64  `json:"sentAtNs,omitempty"`
	ExpiresAtNs  int64  `json:"expiresAtNs,omitempty"`
	Attempts     int    `json:"attempts,omitempty"`
	Locks        int    `json:"locks,omitempty"`
	Blocked      bool   `json:"blocked,omitempty"`
	VerifiedAtNs int64  `json:"verifiedAtNs,omitempty"`
	VerifiedGen  int    `json:"verifiedGen,omitempty"`
}

// Stored is the stored form of s.
func (s State) Stored() Record {
	return Record{Channel: s.Channel, Destination: s.Destination, CodeHash: s.CodeHash, SentAtNs: nanos(s.SentAt),
		ExpiresAtNs: nanos(s.ExpiresAt), Attempts: s.Attempts, Locks: s.Locks, Blocked: s.Blocked,
		VerifiedAtNs: nanos(s.VerifiedAt), VerifiedGen: s.VerifiedGen}
}

// State reads the stored form back.
func (r Record) State() State {
	return State{Channel: r.Channel, Destination: r.Destination, CodeHash: r.CodeHash, SentAt: fromNanos(r.SentAtNs),
		ExpiresAt: fromNanos(r.ExpiresAtNs), Attempts: r.Attempts, Locks: r.Locks, Blocked: r.Blocked,
		VerifiedAt: fromNanos(r.VerifiedAtNs), VerifiedGen: r.VerifiedGen}
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
