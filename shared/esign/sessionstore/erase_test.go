package sessionstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/esign/sessionstore/storetest"
)

// TestScrubEmailHashLeavesItNowhere: erasure cuts a slot's hash out of every audit row of the
// partition, inside the events' data too (slot.invited, slot.reinvited carry it there), and
// leaves the other slot's hash and everything else as it was.
func TestScrubEmailHashLeavesItNowhere(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s, slots := newSession("t1", "C-scrub", now, 2)
	slots[0].EmailHash, slots[1].EmailHash = "0a1b2c3d4e5f", "9f8e7d6c5b4a"
	create(t, st, s, slots, now)
	later := now.Add(time.Second)
	_, _, err := st.Update(ctx, s.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
		ch, err := esign.Activate(s, slots, 0, later, nil)
		if err != nil {
			return ch, esign.Extras{}, err
		}
		re, err := esign.Reinvite(s, slots, 0, later)
		ch.Events = append(ch.Events, re.Events...)
		return ch, esign.Extras{}, err
	})
	if err != nil {
		t.Fatal(err)
	}

	n, err := st.ScrubEmailHash(ctx, s.GroupID, "0a1b2c3d4e5f")
	if err != nil || n != 3 { // slot.invited, slot.activated (its column), slot.reinvited
		t.Fatalf("scrubbed %d rows: %v", n, err)
	}
	rows, err := st.Table().Query(ctx, s.GroupID, nil)
	if err != nil {
		t.Fatal(err)
	}
	other := 0
	for _, r := range rows {
		for k, v := range r.Props {
			str, _ := v.(string)
			if strings.HasPrefix(r.RowKey, sessionstore.PrefixEvent) && strings.Contains(str, "0a1b2c3d4e5f") {
				t.Errorf("row %s (%s) still holds the hash in %s: %s", r.RowKey, r.String("kind"), k, str)
			}
			if strings.Contains(str, "9f8e7d6c5b4a") {
				other++
			}
		}
	}
	if other < 3 { // the other slot's invitation: its column and data, and the session row
		t.Fatalf("the other slot's hash was touched: %d properties hold it", other)
	}
	evs, err := st.Events(ctx, s.GroupID)
	if err != nil || len(evs) != 6 || evs[1].Kind != esign.EvSlotInvited || evs[1].Data["role"] != "r" {
		t.Fatalf("events after scrubbing %+v: %v", evs, err)
	}
	if n, err := st.ScrubEmailHash(ctx, s.GroupID, "0a1b2c3d4e5f"); err != nil || n != 0 {
		t.Fatalf("scrubbing again: %d %v", n, err)
	}
}
