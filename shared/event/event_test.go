package event

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/kernel"
)

// TestMapPublishesOnlyKnownTypes: every mapped audit kind publishes a type of DESIGN 17, every
// type (delivery.expired too, issue 27) has an audit kind, and OTP, notice and token kinds
// publish nothing.
func TestMapPublishesOnlyKnownTypes(t *testing.T) {
	t.Parallel()
	covered := map[string]bool{}
	for k, typ := range auditKinds {
		if !KnownType(typ) || typ == All {
			t.Fatalf("%s maps to %q", k, typ)
		}
		covered[typ] = true
	}
	for _, typ := range Types {
		if !covered[typ] {
			t.Errorf("no audit kind publishes %s", typ)
		}
	}
	for _, k := range []string{"slot.otp_sent", "slot.otp_verified", "delivery.otp_sent", "notification.sent", "slot.transfer_created", "pii.erased"} {
		if typ, ok := Map(k); ok {
			t.Errorf("%s publishes %s", k, typ)
		}
	}
}

// TestEnvelopeHoldsIDsStatesAndTimes: the body of an event has exactly id, type, timestamp,
// tenantId and data, and data exactly object, id, slot, state, occurredAt: no field can carry
// an e-mail address, a phone number, a token or a code.
func TestEnvelopeHoldsIDsStatesAndTimes(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 2, 0, 0, 0, time.FixedZone("x", 3600))
	b, err := FromPublished(kernel.Published{ID: "evt_1", Type: SlotSigned, TenantID: "t", Object: "session",
		AggregateID: "g", Slot: 0, State: "in_progress", At: at}).Body()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	_ = json.Unmarshal(m["data"], &data)
	if keys := slices.Sorted(maps.Keys(m)); !slices.Equal(keys, []string{"data", "id", "tenantId", "timestamp", "type"}) {
		t.Fatalf("envelope keys %v", keys)
	}
	if keys := slices.Sorted(maps.Keys(data)); !slices.Equal(keys, []string{"id", "object", "occurredAt", "slot", "state"}) {
		t.Fatalf("data keys %v", keys)
	}
	if string(m["timestamp"]) != `"2026-11-27T01:00:00Z"` {
		t.Fatalf("timestamp %s", m["timestamp"])
	}
	if n := reflect.TypeFor[Data]().NumField(); n != 5 {
		t.Fatalf("Data has %d fields: a new one must hold ids, states or times only", n)
	}
}
