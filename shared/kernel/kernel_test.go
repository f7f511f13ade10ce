package kernel

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestByStampsOnlyEventsWithoutActor(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	var c Change
	c.Record("a", NoSlot, at, nil)
	c.Events = append(c.Events, Event{Kind: "b", Slot: 1, At: at, Actor: Actor{Kind: "signer", ID: "s1"}})
	c.By(Actor{Kind: "system", ID: "job"})
	want := []Actor{{Kind: "system", ID: "job"}, {Kind: "signer", ID: "s1"}}
	for i, ev := range c.Events {
		if ev.Actor != want[i] {
			t.Fatalf("event %d actor = %+v, want %+v", i, ev.Actor, want[i])
		}
	}
}

func TestTouchKeepsChildrenSortedOnce(t *testing.T) {
	t.Parallel()
	var c Change
	for _, i := range []int{3, 1, 3, 0, 1} {
		c.Touch(i)
	}
	if d := cmp.Diff([]int{0, 1, 3}, c.Slots); d != "" {
		t.Fatalf("slots (-want +got):\n%s", d)
	}
}

func TestMergeAndEmpty(t *testing.T) {
	t.Parallel()
	var a, b Change
	if !a.Empty() {
		t.Fatal("zero change is not empty")
	}
	a.Touch(2)
	a.Record("x", 2, time.Time{}, nil)
	b.Touch(1)
	b.Touch(2)
	b.Record("y", NoSlot, time.Time{}, nil)
	b.Ask("seal", NoSlot)
	a.Merge(b)
	if d := cmp.Diff(Change{Slots: []int{1, 2}, Events: []Event{{Kind: "x", Slot: 2}, {Kind: "y", Slot: NoSlot}},
		Effects: []Effect{{Kind: "seal", Slot: NoSlot}}}, a); d != "" {
		t.Fatalf("merge (-want +got):\n%s", d)
	}
	if a.Empty() {
		t.Fatal("merged change is empty")
	}
	if !a.Asks("seal") || a.Asks("invite") {
		t.Fatalf("Asks: seal %t, invite %t", a.Asks("seal"), a.Asks("invite"))
	}
}
