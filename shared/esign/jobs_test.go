package esign

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/kernel/kerneltest"
)

// jobStore is the session store in memory for the job use cases: sessions by group id, the
// expiry schedule, the notification claims, the signature rows and the recorded events. Commit
// answers the errors queued in commitErrs first (a lost race), then stores the change.
type jobStore struct {
	JobStore // methods the tests do not reach panic
	sessions map[string]*Session
	slots    map[string][]Slot
	corrupt  map[string]*CorruptError
	loads    int

	commitErrs []error
	commits    []Change
	recorded   []Event

	due             []string
	forgot, orphans []string
	swept           int

	claimErr     error
	completeErrs []error
	completed    []Event
	released     int
	sent         map[string]bool

	sigs      map[int]StoredSignature
	deleted   []int
	deleteErr error
	since     map[string]time.Time
}

func newJobStore(ss ...*Session) *jobStore {
	m := &jobStore{sessions: map[string]*Session{}, slots: map[string][]Slot{}, corrupt: map[string]*CorruptError{},
		sent: map[string]bool{}, since: map[string]time.Time{}}
	for _, s := range ss {
		m.sessions[s.GroupID] = s
	}
	return m
}

// put stores copies, as a table would: a caller's later changes are not stored.
func (m *jobStore) put(s *Session, slots []Slot) {
	cp := *s
	m.sessions[s.GroupID], m.slots[s.GroupID] = &cp, append([]Slot(nil), slots...)
}

func (m *jobStore) Load(_ context.Context, groupID string) (*Session, []Slot, error) {
	m.loads++
	if c, ok := m.corrupt[groupID]; ok {
		return nil, nil, c
	}
	s, ok := m.sessions[groupID]
	if !ok {
		return nil, nil, ErrSessionNotFound
	}
	cp := *s
	return &cp, append([]Slot(nil), m.slots[groupID]...), nil
}

func (m *jobStore) Commit(_ context.Context, s *Session, slots []Slot, ch Change, _ Extras) error {
	if len(m.commitErrs) > 0 {
		err := m.commitErrs[0]
		m.commitErrs = m.commitErrs[1:]
		return err
	}
	m.put(s, slots)
	m.commits = append(m.commits, ch)
	return nil
}

func (m *jobStore) RecordEvents(_ context.Context, _ string, _ []Slot, ch Change) error {
	m.recorded = append(m.recorded, ch.Events...)
	return nil
}

func (m *jobStore) DueForExpiry(context.Context, time.Time, int) ([]string, error) { return m.due, nil }
func (m *jobStore) ForgetExpiry(_ context.Context, s *Session) error {
	m.forgot = append(m.forgot, s.GroupID)
	return nil
}
func (m *jobStore) ForgetOrphanExpiry(_ context.Context, groupID string, _ time.Time) error {
	m.orphans = append(m.orphans, groupID)
	return nil
}
func (m *jobStore) SweepTransfers(context.Context, time.Time, int) (int, error) {
	m.swept++
	return 0, nil
}

// SendNotice keeps the kernel's contract (aggstore.Table.SendNotice): a notification sent
// before is ErrAlreadySent; claimErr is the claim's error; a failed send gives the claim back
// (released); completeErrs are the recording's errors in turn, an ErrInFlight ending it and
// another retried once.
func (m *jobStore) SendNotice(_ context.Context, a Aggregate, id string, _ time.Time, _ time.Duration, send func() ([]Event, error)) error {
	if m.sent[id] {
		return ErrAlreadySent
	}
	if m.claimErr != nil {
		return m.claimErr
	}
	events, err := send()
	if err != nil {
		m.released++
		return err
	}
	for try := 0; try < 2; try++ {
		if len(m.completeErrs) == 0 {
			m.sent[id] = true
			m.completed = append(m.completed, events...)
			return nil
		}
		err = m.completeErrs[0]
		m.completeErrs = m.completeErrs[1:]
		if errors.Is(err, ErrInFlight) {
			return err
		}
	}
	return err
}
func (m *jobStore) NoticeSent(_ context.Context, _, id string) (bool, error) {
	return m.sent[id], nil
}

func (m *jobStore) SignatureSlots(context.Context, string) ([]int, error) {
	var out []int
	for i := range m.sigs {
		out = append(out, i)
	}
	slices.Sort(out)
	return out, nil
}
func (m *jobStore) DeleteSignature(_ context.Context, _ string, slot int) error {
	if m.deleteErr != nil {
		return m.deleteErr
	}
	delete(m.sigs, slot)
	m.deleted = append(m.deleted, slot)
	return nil
}
func (m *jobStore) Sealing(context.Context, int) ([]*Session, error) {
	var out []*Session
	for _, s := range m.sessions {
		if s.State == SessionSealing {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *Session) int { return strings.Compare(a.GroupID, b.GroupID) })
	return out, nil
}
func (m *jobStore) SealingSince(_ context.Context, groupID string) (time.Time, error) {
	return m.since[groupID], nil
}

var jobActor = Actor{Kind: "system", ID: "test"}

func liveSession(id string, expires time.Time) (*Session, []Slot) {
	s, slots := newSession(ModeParallel, Required, Required)
	s.GroupID, s.TenantID, s.ExpiresAt = id, "t1", expires
	Start(s, slots, t0)
	return s, slots
}

func TestExpireDue(t *testing.T) {
	t.Parallel()
	now := t0.Add(2 * time.Hour)
	st := newJobStore()
	st.put(liveSession("due", t0.Add(time.Hour)))
	st.put(liveSession("later", now.Add(time.Hour))) // a stale schedule entry
	ended, endedSlots := liveSession("ended", t0.Add(time.Hour))
	ended.State = SessionComplete
	st.put(ended, endedSlots)
	st.due = []string{"due", "later", "ended", "gone"}
	st.commitErrs = []error{ErrConcurrent} // the first commit loses a race and is run again
	u := &SessionJobs{Store: st}

	n, err := u.ExpireDue(context.Background(), now, 10, jobActor)
	if err != nil || n != 1 {
		t.Fatalf("ExpireDue = %d, %v; want 1 expired", n, err)
	}
	if st.sessions["due"].State != SessionExpired || st.sessions["later"].State == SessionExpired {
		t.Fatalf("states due=%s later=%s", st.sessions["due"].State, st.sessions["later"].State)
	}
	if len(st.commits) != 1 || st.commits[0].Events[0].Actor != jobActor {
		t.Fatalf("commits %+v, want one by the job", st.commits)
	}
	if !slices.Equal(st.forgot, []string{"due", "ended"}) || !slices.Equal(st.orphans, []string{"gone"}) || st.swept != 1 {
		t.Fatalf("forgot %v orphans %v swept %d", st.forgot, st.orphans, st.swept)
	}
}

func TestExpireDueGivesUpAfterTwoLostRacesAndGoesOn(t *testing.T) {
	t.Parallel()
	now := t0.Add(2 * time.Hour)
	st := newJobStore()
	st.put(liveSession("a", t0.Add(time.Hour)))
	st.put(liveSession("b", t0.Add(time.Hour)))
	st.due = []string{"a", "b"}
	st.commitErrs = []error{ErrConcurrent, ErrConcurrent}
	n, err := (&SessionJobs{Store: st}).ExpireDue(context.Background(), now, 10, jobActor)
	if n != 1 || !errors.Is(err, ErrConcurrent) || !strings.Contains(err.Error(), "session a") {
		t.Fatalf("ExpireDue = %d, %v; want b expired and a's lost race", n, err)
	}
	if st.sessions["a"].State == SessionExpired || st.sessions["b"].State != SessionExpired {
		t.Fatal("a was expired after two lost races, or b was not")
	}
}

func TestJobReadsCheckTheTenant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, slots := liveSession("g", t0.Add(time.Hour))
	st := newJobStore()
	st.put(s, slots)
	bare := &Session{GroupID: "bad", TenantID: "t1", State: SessionSealing}
	st.corrupt["bad"] = &CorruptError{Session: bare, Prop: "manifest", Cause: errors.New("bad row")}
	u := &SessionJobs{Store: st}

	if _, _, err := u.Get(ctx, "t2", "g"); !errors.Is(err, ErrWrongTenant) {
		t.Errorf("Get of another tenant: %v", err)
	}
	if _, _, err := u.Get(ctx, "t1", "nope"); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("Get of an unknown session: %v", err)
	}
	if got, _, err := u.Get(ctx, "t1", "g"); err != nil || got.GroupID != "g" {
		t.Errorf("Get = %v, %v", got, err)
	}
	// ToSeal checks the tenant on a corrupt row's plain columns too.
	if _, _, err := u.ToSeal(ctx, "t2", "bad"); !errors.Is(err, ErrWrongTenant) {
		t.Errorf("ToSeal of another tenant's corrupt row: %v", err)
	}
	var c *CorruptError
	if got, _, err := u.ToSeal(ctx, "t1", "bad"); !errors.As(err, &c) || got != bare {
		t.Errorf("ToSeal of a corrupt row = %v, %v; want its plain columns and the CorruptError", got, err)
	}
	// Notice: no tenant in the message checks none; the seal failure's notice reads a corrupt row.
	if _, _, err := u.Notice(ctx, "", "g", false); err != nil {
		t.Errorf("Notice without a tenant: %v", err)
	}
	if _, _, err := u.Notice(ctx, "t2", "g", false); !errors.Is(err, ErrWrongTenant) {
		t.Errorf("Notice of another tenant: %v", err)
	}
	if got, slots, err := u.Notice(ctx, "t1", "bad", true); err != nil || got != bare || slots != nil {
		t.Errorf("seal-failure Notice of a corrupt row = %v, %v, %v", got, slots, err)
	}
	if _, _, err := u.Notice(ctx, "t1", "bad", false); !errors.As(err, &c) {
		t.Errorf("invitation Notice of a corrupt row: %v, want the CorruptError", err)
	}
}

func TestCompleteSeal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := t0.Add(10 * time.Minute)
	s, slots := sealingSession(t)
	s.TenantID = "t1"
	st := newJobStore()
	st.put(s, slots)
	st.commitErrs = []error{ErrConcurrent}
	u := &SessionJobs{Store: st}

	ch, err := u.CompleteSeal(ctx, s, slots, now, "signed/a", "signed/b", "evidence/c", jobActor)
	if err != nil || ch == nil || st.loads != 1 {
		t.Fatalf("CompleteSeal = %v, %v after %d loads; want the change after one reload", ch, err, st.loads)
	}
	if got := st.sessions["g"]; got.State != SessionComplete || got.SignedPath != "signed/a" || ch.Events[0].Actor != jobActor {
		t.Fatalf("stored %+v, change %+v", got, ch)
	}
	// A second attempt finds it complete: nothing to do.
	done, doneSlots, _ := st.Load(ctx, "g")
	if ch, err := u.CompleteSeal(ctx, done, doneSlots, now, "x", "y", "z", jobActor); ch != nil || err != nil {
		t.Fatalf("CompleteSeal of a complete session = %v, %v", ch, err)
	}
	other, otherSlots := liveSession("live", now.Add(time.Hour))
	if _, err := u.CompleteSeal(ctx, other, otherSlots, now, "x", "y", "z", jobActor); !errors.Is(err, ErrNotSealing) {
		t.Fatalf("CompleteSeal of a live session: %v", err)
	}
}

func TestFailSealing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := t0.Add(10 * time.Minute)
	s, slots := sealingSession(t)
	st := newJobStore()
	st.put(s, slots)
	u := &SessionJobs{Store: st}
	ch, err := u.FailSealing(ctx, s, slots, now, "source missing", jobActor)
	if err != nil || ch == nil || st.sessions["g"].SealError != "source missing" {
		t.Fatalf("FailSealing = %v, %v; stored %+v", ch, err, st.sessions["g"])
	}
	if !slices.Contains(kinds(*ch), EvSealFailed) {
		t.Fatalf("events %v, want %s", kinds(*ch), EvSealFailed)
	}
	other, otherSlots := liveSession("live", now.Add(time.Hour))
	if ch, err := u.FailSealing(ctx, other, otherSlots, now, "x", jobActor); ch != nil || err != nil {
		t.Fatalf("FailSealing of a session not sealing = %v, %v; want nothing to record", ch, err)
	}
}

func TestSendOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ev := Event{Kind: "notification.sent", Slot: 0, At: t0}
	ok := func(context.Context) (Event, error) { return ev, nil }
	lease := time.Minute

	st := newJobStore()
	u := &SessionJobs{Store: st}
	if err := u.SendOnce(ctx, "g", "m1", nil, t0, lease, ok); err != nil || !st.sent["m1"] || len(st.completed) != 1 {
		t.Fatalf("SendOnce = %v; sent %v, events %v", err, st.sent, st.completed)
	}
	calls := 0
	counted := func(context.Context) (Event, error) { calls++; return ev, nil }
	if err := u.SendOnce(ctx, "g", "m1", nil, t0, lease, counted); !errors.Is(err, ErrAlreadySent) || calls != 0 {
		t.Fatalf("second SendOnce = %v with %d sends; want ErrAlreadySent and none", err, calls)
	}

	refused := apperr.New(apperr.KindInvalid, "rejected", "no")
	if err := u.SendOnce(ctx, "g", "m2", nil, t0, lease, func(context.Context) (Event, error) { return Event{}, refused }); err != refused || st.released != 1 || st.sent["m2"] {
		t.Fatalf("failed send = %v, released %d; want the send's error and the claim given back", err, st.released)
	}

	st.claimErr = ErrInFlight
	if err := u.SendOnce(ctx, "g", "m3", nil, t0, lease, counted); !errors.Is(err, ErrInFlight) || calls != 0 {
		t.Fatalf("held claim = %v with %d sends", err, calls)
	}
	st.claimErr = nil

	st.completeErrs = []error{errors.New("table down")} // one retry records it
	if err := u.SendOnce(ctx, "g", "m4", nil, t0, lease, ok); err != nil || !st.sent["m4"] {
		t.Fatalf("SendOnce with one failed completion = %v", err)
	}
	st.completeErrs = []error{ErrInFlight} // taken over meanwhile: its new holder records it
	if err := u.SendOnce(ctx, "g", "m5", nil, t0, lease, ok); err != nil || st.sent["m5"] {
		t.Fatalf("SendOnce of a claim taken over = %v", err)
	}
	st.completeErrs = []error{errors.New("down"), errors.New("still down")}
	if err := u.SendOnce(ctx, "g", "m6", nil, t0, lease, ok); err == nil || !strings.Contains(err.Error(), "sent but not recorded") {
		t.Fatalf("SendOnce with two failed completions = %v", err)
	}
}

func TestPurgeSignatures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newJobStore()
	st.sigs = map[int]StoredSignature{0: {PNG: []byte{1}}, 2: {PNG: []byte{2}}}
	u := &SessionJobs{Store: st}
	s := &Session{GroupID: "g"}
	if err := u.PurgeSignatures(ctx, s, nil, t0, jobActor); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.deleted, []int{0, 2}) || len(st.recorded) != 1 {
		t.Fatalf("deleted %v, recorded %+v", st.deleted, st.recorded)
	}
	ev := st.recorded[0]
	if ev.Kind != EvPIIPurged || ev.Slot != -1 || ev.Actor != jobActor || ev.Data["what"] != "signature images" || !slices.Equal(ev.Data["slots"].([]int), []int{0, 2}) {
		t.Fatalf("event %+v", ev)
	}
	if err := u.PurgeSignatures(ctx, s, nil, t0, jobActor); err != nil || len(st.recorded) != 1 {
		t.Fatalf("second purge = %v, recorded %d events; want none more", err, len(st.recorded))
	}
	st.sigs, st.deleteErr = map[int]StoredSignature{1: {}}, errors.New("table down")
	var pe *PurgeError
	if err := u.PurgeSignatures(ctx, s, nil, t0, jobActor); !errors.As(err, &pe) || pe.Step != "deleting the signature of slot 1" || len(st.recorded) != 1 {
		t.Fatalf("failed delete = %v, recorded %d events; want the step and no pii.purged", err, len(st.recorded))
	}
}

func TestStuckSeals(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Hour)
	stuck := 10 * time.Minute
	st := newJobStore(
		&Session{GroupID: "a-fresh", TenantID: "t", State: SessionSealing},
		&Session{GroupID: "b-stuck", TenantID: "t", State: SessionSealing},
		&Session{GroupID: "c-failed", TenantID: "t", State: SessionSealing, SealError: "x"},
		&Session{GroupID: "d-unknown", TenantID: "t", State: SessionSealing},
		&Session{GroupID: "e-live", TenantID: "t", State: SessionInProgress},
	)
	st.since["a-fresh"] = now.Add(-stuck / 2)
	st.since["b-stuck"] = now.Add(-35 * time.Minute)
	got, err := (&SessionJobs{Store: st}).StuckSeals(context.Background(), now, 10, stuck)
	if err != nil {
		t.Fatal(err)
	}
	want := []SealMessage{{GroupID: "b-stuck", TenantID: "t", Attempt: 3}, {GroupID: "d-unknown", TenantID: "t", Attempt: 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("StuckSeals = %+v, want %+v", got, want)
	}
}

func TestCheckInvitations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := t0.Add(5 * time.Minute)
	st := newJobStore()
	for _, id := range []string{"owes", "busy", "done"} {
		s, slots := liveSession(id, t0.Add(time.Hour))
		for i := range slots {
			slots[i].LinkJTI, slots[i].EmailEnc = id+"-jti", "enc"
		}
		st.put(s, slots)
	}
	st.sent["done-0"], st.sent["done-1"] = true, true
	checks := &kerneltest.Checks{Items: []kernel.Due{{ID: "owes"}, {ID: "busy"}, {ID: "owes", At: t0}, {ID: "done"}, {ID: "gone"}}}
	u := &SessionJobs{Store: st, InviteChecks: checks}
	var sent []string
	messageID := func(m NotifyMessage) string { return m.GroupID + "-" + string(rune('0'+m.Slot)) }
	r, err := u.CheckInvitations(ctx, now, 10, messageID, func(_ context.Context, m NotifyMessage) error {
		sent = append(sent, messageID(m))
		if m.GroupID == "busy" {
			return ErrInFlight
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sent, []string{"owes-0", "owes-1", "busy-0"}) {
		t.Fatalf("sent %v", sent)
	}
	if r.Checked != 3 || r.Sent != 3 || !slices.Equal(r.Again, []string{"busy"}) {
		t.Fatalf("run %+v", r)
	}
	if !slices.Equal(checks.Forgot, []string{"owes", "owes", "done", "gone"}) {
		t.Fatalf("forgot %v; want every entry of the checked sessions, none of busy's", checks.Forgot)
	}
	if _, err := (&SessionJobs{Store: st}).CheckInvitations(ctx, now, 10, messageID, nil); err == nil {
		t.Fatal("CheckInvitations without a schedule answered no error")
	}
}
