package delivery

import (
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
)

// A create is all or nothing for its caller (issue 10): every create runs under an idempotency
// key, the caller's Idempotency-Key or, without one, a key derived from the correlationId and
// the request. The first request claims the key and stores a Plan; a request that fails part-way
// leaves its plan, and a retry of the same request carries the same plan out (the sessions
// already stored are kept, the missing ones created: one session per recipient, never two).
// See docs/decisions.md.
const (
	// KeyRetention is how long a plan answers its key: a repeated request gets the stored answer
	// and another request under the key is refused; after it (or once the plan's sessions
	// expired, whichever comes first) the key is free again.
	KeyRetention = 24 * time.Hour
	// MaxIdempotencyKey is the longest Idempotency-Key accepted (characters).
	MaxIdempotencyKey = 255
	// FieldIdempotencyKey names the header in a 400.
	FieldIdempotencyKey = "Idempotency-Key"
)

// Errors of a create under a key that is taken.
var (
	ErrKeyReused = &apperr.Error{Kind: apperr.KindConflict, Code: "idempotency_key_reused",
		Detail: "this Idempotency-Key was used with another request; use a new key for a new delivery"}
	ErrCreateInProgress = &apperr.Error{Kind: apperr.KindConflict, Code: "request_in_progress",
		Detail: "the same request (its Idempotency-Key, or its correlationId and body) is under way; retry once it has answered"}
	// ErrExists is the store's answer to a deliveryId already stored (an earlier run of the plan
	// stored it).
	ErrExists = &apperr.Error{Kind: apperr.KindConflict, Code: "delivery_exists", Detail: "this delivery session exists"}
)

// Plan is what the first request under a key decided, kept by the store with the key so that a
// retry makes the same sessions and answers the same links.
type Plan struct {
	// ID is random; recipient i's deliveryId is derived from it (DeliveryID).
	ID string
	// Hash is the keyed hash of the caller and the normalised request.
	Hash string
	// CreatedAt is when the plan was made: the links' issue time.
	CreatedAt time.Time
	// ExpiresAt is every session's expiry.
	ExpiresAt time.Time
	// Done: a run stored every session; a request under the key answers the plan.
	Done bool
}

// planSpace is the namespace of the deliveryIds derived from plans.
var planSpace = uuid.MustParse("0b6f4a4e-5d1c-4c1e-9a52-3f1d2c7e8a90")

// DeliveryID is recipient i's deliveryId: a name-based UUID of the plan's id and i, the same in
// every run of the plan.
func (p Plan) DeliveryID(i int) string {
	return uuid.NewSHA1(planSpace, []byte(p.ID+"/"+strconv.Itoa(i))).String()
}

// Lapsed reports whether the plan no longer answers its key at now: KeyRetention after it was
// made, or once its sessions expired.
func (p Plan) Lapsed(now time.Time) bool {
	return !now.Before(p.CreatedAt.Add(KeyRetention)) || !now.Before(p.ExpiresAt)
}

// checkKey validates an Idempotency-Key: 1 to 255 visible ASCII characters.
func checkKey(key string) error {
	ok := len(key) <= MaxIdempotencyKey && strings.IndexFunc(key, func(r rune) bool { return r < 0x21 || r > 0x7e }) < 0
	if !ok {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field(FieldIdempotencyKey,
			"at most "+strconv.Itoa(MaxIdempotencyKey)+" visible ASCII characters (a UUID, say)"))
	}
	return nil
}

// idempotencyKey is the key a create runs under in its tenant: the caller's, or derived from
// the correlationId and the request's hash. The prefixes keep the two apart.
func idempotencyKey(header, correlationID, hash string) string {
	if header != "" {
		return "key:" + header
	}
	return "req:" + correlationID + ":" + hash
}
