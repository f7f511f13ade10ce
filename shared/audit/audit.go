// Package audit is the one stored form of an audit event, shared by every aggregate (signing
// sessions, deliveries): a row in the aggregate's own partition, written in the same
// entity-group transaction as the state change it records. Rows sort by time (nanoseconds),
// then by their order within one change. A row never holds an e-mail address, a phone number, a
// token or a code: only hashes, ids, IPs and user agents.
package audit

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/kernel"
)

// ErrCorrupt matches (errors.Is) the error of an audit row that does not read back. The audit
// trail is evidence: a reader never goes on with a gap in it.
var ErrCorrupt = &apperr.Error{Kind: apperr.KindInternal, Code: "stored_audit_corrupt", Detail: "a stored audit event could not be read"}

// RowPrefix starts every audit row's RowKey.
const RowPrefix = "evt-"

// Record is one audit event as stored (kernel.Record). Slot is -1 for events not about one
// slot.
type Record = kernel.Record

// Key sorts events by time, then by their order (seq) in one change; the random tail keeps
// two changes stamped with the same nanosecond from colliding.
func Key(at time.Time, seq int) string {
	var tail [4]byte
	_, _ = rand.Read(tail[:])
	return fmt.Sprintf("%s%020d-%04d-%x", RowPrefix, at.UnixNano(), seq, tail)
}

// Entity is the row of r, the seq-th event of its change, in partition.
func Entity(partition string, r Record, seq int) (tablestore.Entity, error) {
	data := "{}"
	if len(r.Data) > 0 {
		b, err := json.Marshal(r.Data)
		if err != nil {
			return tablestore.Entity{}, fmt.Errorf("audit: event %s data: %w", r.Kind, err)
		}
		data = string(b)
	}
	return tablestore.Entity{PartitionKey: partition, RowKey: Key(r.At, seq), Props: map[string]any{
		"kind": r.Kind, "atNs": r.At.UnixNano(), "at": r.At.UTC().Format(time.RFC3339Nano), "slot": int64(r.Slot),
		"actorKind": r.ActorKind, "actorId": r.ActorID, "ip": r.IP, "userAgent": r.UserAgent,
		"emailHash": r.EmailHash, "data": data,
	}}, nil
}

// FromEntity reads an audit row back. Errors: ErrCorrupt (naming the row, never its content)
// when its data does not decode.
func FromEntity(e tablestore.Entity) (Record, error) {
	r := Record{
		Seq: e.RowKey, Kind: e.String("kind"), At: FromNanos(e.Int64("atNs")), Slot: int(e.Int64("slot")),
		ActorKind: e.String("actorKind"), ActorID: e.String("actorId"), IP: e.String("ip"),
		UserAgent: e.String("userAgent"), EmailHash: e.String("emailHash"),
	}
	if d := e.String("data"); d != "" && d != "{}" {
		if err := json.Unmarshal([]byte(d), &r.Data); err != nil {
			return Record{}, apperr.Wrap(fmt.Errorf("audit row %s/%s data: %w", e.PartitionKey, e.RowKey, err),
				ErrCorrupt.Kind, ErrCorrupt.Code, "%s", ErrCorrupt.Detail)
		}
	}
	return r, nil
}

// Nanos is t in Unix nanoseconds, 0 for the zero time (how times are stored): kernel.Nanos.
func Nanos(t time.Time) int64 { return kernel.Nanos(t) }

// FromNanos reverses Nanos (UTC).
func FromNanos(n int64) time.Time { return kernel.FromNanos(n) }
