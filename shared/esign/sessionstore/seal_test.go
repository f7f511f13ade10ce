package sessionstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/esign/sessionstore/storetest"
)

// toSealing signs every slot of a created session so that it is sealing; it returns when.
func toSealing(t *testing.T, st *sessionstore.Store, groupID string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	s, slots, err := st.Load(ctx, groupID)
	if err != nil {
		t.Fatal(err)
	}
	var ch esign.Change
	for i := range slots {
		for _, step := range []func() (esign.Change, error){
			func() (esign.Change, error) { return esign.Activate(s, slots, i, at, nil) },
			func() (esign.Change, error) { return esign.MarkViewed(s, slots, i, at, nil) },
			func() (esign.Change, error) {
				return esign.Consent(s, slots, i, at, []string{"document_reviewed", "electronic_signature", "legally_binding"})
			},
			func() (esign.Change, error) { return esign.Sign(s, slots, i, at, esign.SignInput{SignerName: "N"}) },
		} {
			c, err := step()
			if err != nil {
				t.Fatal(err)
			}
			for _, sl := range c.Slots {
				ch.Slots = append(ch.Slots, sl)
			}
			ch.Events = append(ch.Events, c.Events...)
		}
	}
	ch.Slots = uniq(ch.Slots)
	if s.State != esign.SessionSealing {
		t.Fatalf("state %s", s.State)
	}
	if err := st.Apply(ctx, s, slots, ch); err != nil {
		t.Fatal(err)
	}
}

func uniq(in []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, i := range in {
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}

func TestSealingScanAndSince(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Date(2026, 11, 22, 10, 0, 0, 5, time.UTC)
	live, liveSlots := newSession("t1", "S1", now, 1)
	create(t, st, live, liveSlots, now)
	sealing, sealingSlots := newSession("t1", "S2", now, 2)
	create(t, st, sealing, sealingSlots, now)
	at := now.Add(3 * time.Minute)
	toSealing(t, st, sealing.GroupID, at)

	got, err := st.Sealing(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].GroupID != sealing.GroupID || got[0].State != esign.SessionSealing {
		t.Fatalf("sealing scan: %+v", got)
	}
	since, err := st.SealingSince(ctx, sealing.GroupID)
	if err != nil || !since.Equal(at) {
		t.Fatalf("sealing since %v %v, want %v", since, err, at)
	}
	if since, err := st.SealingSince(ctx, live.GroupID); err != nil || !since.IsZero() {
		t.Fatalf("live session sealing since %v %v", since, err)
	}
}

func TestRecordEventsAndSignatureSlots(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Now().UTC()
	s, slots := newSession("t1", "S3", now, 3)
	create(t, st, s, slots, now)
	for _, i := range []int{2, 0} {
		op, err := sessionstore.SignatureOp(s.GroupID, i, sessionstore.Signature{PNG: []byte{1, 2, 3}, Fields: "[]", Consents: "[]"})
		if err != nil {
			t.Fatal(err)
		}
		loaded, ls, _ := st.Load(ctx, s.GroupID)
		if err := st.Apply(ctx, loaded, ls, esign.Change{}, op); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.SignatureSlots(ctx, s.GroupID)
	if err != nil || len(got) != 2 || got[0] != 0 || got[1] != 2 {
		t.Fatalf("signature slots %v %v", got, err)
	}
	before, _, _ := st.Load(ctx, s.GroupID)
	ch := esign.Change{Events: []esign.Event{{Kind: esign.EvPIIPurged, Slot: 2, At: now.Add(time.Second), Data: map[string]any{"what": "signature images"}}}}
	if err := st.RecordEvents(ctx, s.GroupID, slots, ch); err != nil {
		t.Fatal(err)
	}
	after, _, _ := st.Load(ctx, s.GroupID)
	if after.ETag != before.ETag {
		t.Fatal("RecordEvents changed the session row")
	}
	evs, _ := st.Events(ctx, s.GroupID)
	last := evs[len(evs)-1]
	if last.Kind != esign.EvPIIPurged || last.Slot != 2 || last.EmailHash != "h2" || last.Data["what"] != "signature images" {
		t.Fatalf("recorded event %+v", last)
	}
	if err := st.RecordEvents(ctx, s.GroupID, slots, esign.Change{Slots: []int{0}, Events: ch.Events}); err == nil {
		t.Fatal("a state change was accepted by RecordEvents")
	}
}

func TestSealLock(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Now().UTC()
	g := "lock-group"
	steps := []struct {
		name    string
		owner   string
		at      time.Time
		wantErr error
	}{
		{"first owner takes it", "a", now, nil},
		{"same owner again", "a", now.Add(time.Second), nil},
		{"other owner is refused while live", "b", now.Add(time.Minute), sessionstore.ErrSealBusy},
		{"other owner takes over an expired lock", "b", now.Add(11 * time.Minute), nil},
		{"former owner is now refused", "a", now.Add(12 * time.Minute), sessionstore.ErrSealBusy},
	}
	for _, s := range steps {
		err := st.AcquireSealLock(ctx, g, s.owner, s.at, 10*time.Minute)
		if !errors.Is(err, s.wantErr) && !(err == nil && s.wantErr == nil) {
			t.Fatalf("%s: err %v, want %v", s.name, err, s.wantErr)
		}
	}
	if err := st.ReleaseSealLock(ctx, g, "a"); err != nil { // not a's: left alone
		t.Fatal(err)
	}
	if err := st.AcquireSealLock(ctx, g, "c", now.Add(13*time.Minute), 10*time.Minute); !errors.Is(err, sessionstore.ErrSealBusy) {
		t.Fatalf("release by a non-owner freed the lock: %v", err)
	}
	if err := st.ReleaseSealLock(ctx, g, "b"); err != nil {
		t.Fatal(err)
	}
	if err := st.AcquireSealLock(ctx, g, "c", now.Add(13*time.Minute), 10*time.Minute); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

// A sealing session whose manifest does not decode: Load answers CorruptError with the row's
// plain columns, the reconciler's scan still lists it, FailCorruptSeal records the failure on
// the row's ETag without touching the unreadable part, and a stale ETag is a lost race.
func TestCorruptSessionRow(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Now().UTC()
	s, slots := newSession("t1", "S9", now, 1)
	s.RequestedByEmailEnc = "ciphertext"
	create(t, st, s, slots, now)
	toSealing(t, st, s.GroupID, now.Add(time.Second))
	const bad = `[{"name":`
	if _, err := st.Table().Merge(ctx, tablestore.Entity{PartitionKey: s.GroupID, RowKey: sessionstore.RowSession, ETag: "*", Props: map[string]any{"manifest": bad}}); err != nil {
		t.Fatal(err)
	}
	_, _, err := st.Load(ctx, s.GroupID)
	var c *sessionstore.CorruptError
	if !errors.As(err, &c) || !errors.Is(err, sessionstore.ErrCorrupt) || c.Prop != "manifest" || c.Session.State != esign.SessionSealing ||
		c.Session.RequestedByEmailEnc != "ciphertext" || c.Session.Manifest != nil {
		t.Fatalf("load: %v %+v", err, c)
	}
	if list, err := st.Sealing(ctx, 0); err != nil || len(list) != 1 || list[0].GroupID != s.GroupID {
		t.Fatalf("sealing scan: %v %v", list, err)
	}

	stale := *c.Session
	stale.ETag = `W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`
	ch, err := esign.FailSeal(&stale, now, "unreadable")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FailCorruptSeal(ctx, &stale, ch); !errors.Is(err, sessionstore.ErrConcurrent) {
		t.Fatalf("stale ETag: %v", err)
	}
	ch, err = esign.FailSeal(c.Session, now, "unreadable")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FailCorruptSeal(ctx, c.Session, ch); err != nil {
		t.Fatal(err)
	}
	row, err := st.Table().Get(ctx, s.GroupID, sessionstore.RowSession)
	if err != nil || row.String("manifest") != bad || row.String("sealError") != "unreadable" || row.String("state") != string(esign.SessionSealing) {
		t.Fatalf("row after the failure: %v %v", row.Props, err)
	}
	if at, err := st.LastEvent(ctx, s.GroupID, esign.EvSealFailed); err != nil || !at.Equal(now) {
		t.Fatalf("seal.failed at %v %v, want %v", at, err, now)
	}
}
