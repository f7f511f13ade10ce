package otp

import "github.com/esign-svc/esign/shared/kernel"

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
	BlockedAtNs  int64  `json:"blockedAtNs,omitempty"`
	VerifiedAtNs int64  `json:"verifiedAtNs,omitempty"`
	VerifiedGen  int    `json:"verifiedGen,omitempty"`
}

// Stored is the stored form of s.
func (s State) Stored() Record {
	return Record{Channel: s.Channel, Destination: s.Destination, CodeHash: s.CodeHash, SentAtNs: kernel.Nanos(s.SentAt),
		ExpiresAtNs: kernel.Nanos(s.ExpiresAt), Attempts: s.Attempts, Locks: s.Locks, Blocked: s.Blocked, BlockedAtNs: kernel.Nanos(s.BlockedAt),
		VerifiedAtNs: kernel.Nanos(s.VerifiedAt), VerifiedGen: s.VerifiedGen}
}

// State reads the stored form back.
func (r Record) State() State {
	return State{Channel: r.Channel, Destination: r.Destination, CodeHash: r.CodeHash, SentAt: kernel.FromNanos(r.SentAtNs),
		ExpiresAt: kernel.FromNanos(r.ExpiresAtNs), Attempts: r.Attempts, Locks: r.Locks, Blocked: r.Blocked, BlockedAt: kernel.FromNanos(r.BlockedAtNs),
		VerifiedAt: kernel.FromNanos(r.VerifiedAtNs), VerifiedGen: r.VerifiedGen}
}
