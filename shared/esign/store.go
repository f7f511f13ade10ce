package esign

import (
	"context"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
)

// ErrSessionNotFound is the answer for an unknown session, and for another tenant's: the two
// cannot be told apart (sessionstore.ErrNotFound is this error).
var ErrSessionNotFound = &apperr.Error{Kind: apperr.KindNotFound, Code: "session_not_found", Detail: "no such signing session"}

// Extras are the rows besides the session row and its audit events that a transition commits in
// the same transaction: the store turns them into its own operations, so no caller builds one.
type Extras struct {
	// CallbackID is accepted once per session; a second commit of it fails with the store's
	// callback_replayed (401) and writes nothing.
	CallbackID string
	// Signature is what a signer submitted with the callback (kept for the seal).
	Signature *SignatureRecord
	// NewTransfer stores a new cross-device token (its hash) in the session's partition.
	NewTransfer *Transfer
	// Redeemed consumes a stored cross-device token on the ETag it was read with, so of two
	// redeems in a race only one commits.
	Redeemed *Transfer
}

// SignatureRecord is a slot's stored signature: the PNG, the completed fields and the consents
// (JSON). Errors on storing: 413 signature_too_large beyond the store's limit.
type SignatureRecord struct {
	Slot     int
	PNG      []byte
	Fields   string
	Consents string
}

// Aggregate is a signing session as its store keeps it: the session and its slots, loaded and
// written together.
type Aggregate struct {
	Session *Session
	Slots   []Slot
}

// Step runs a transition on a freshly loaded session and says what else to commit with it.
// An error leaves everything unchanged.
type Step func(s *Session, slots []Slot) (Change, Extras, error)

// update is a store's Update (kernel.Updater, the one shape of the stores) with the aggregate
// spread into its session and slots (nil on an error).
func update(ctx context.Context, st kernel.Updater[Aggregate, Step], groupID string, step Step) (*Session, []Slot, Change, error) {
	a, ch, err := st.Update(ctx, groupID, step)
	return a.Session, a.Slots, ch, err
}

// SessionStore is what the session use cases need of the store (sessionstore.Store).
type SessionStore interface {
	// Load reads a session with its slots. Errors: ErrSessionNotFound; the store's.
	Load(ctx context.Context, groupID string) (*Session, []Slot, error)
	// Update loads the session, runs step and stores its change with the audit events and the
	// extras in one transaction on the session's ETag (a lost race runs step again;
	// kernel.Updater). A step error is returned as is, with nothing written. Errors:
	// ErrSessionNotFound; callback_replayed; the store's.
	kernel.Updater[Aggregate, Step]
	// GroupByCorrelation is the tenant's latest session for a correlationId.
	GroupByCorrelation(ctx context.Context, tenantID, correlationID string) (string, error)
	// SealingSince is when the session last entered sealing (zero: never).
	SealingSince(ctx context.Context, groupID string) (time.Time, error)
	// CountEvents is how many audit events of kind the session has.
	CountEvents(ctx context.Context, groupID, kind string) (int, error)
	// ScrubEmailHash cuts an e-mail hash out of the session's audit rows; it answers how many
	// rows changed.
	ScrubEmailHash(ctx context.Context, groupID, hash string) (int, error)
	// IndexTransfer, TransferGroup, Transfer and ForgetTransfer keep the cross-device tokens'
	// index (by hash) and read a stored token with its ETag (ErrTransferInvalid when absent).
	IndexTransfer(ctx context.Context, groupID string, t Transfer) error
	TransferGroup(ctx context.Context, hash string) (string, error)
	Transfer(ctx context.Context, groupID, hash string) (Transfer, error)
	ForgetTransfer(ctx context.Context, hash string) error
}
