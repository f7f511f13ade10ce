package workflowtrigger

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/workflow"
	"github.com/esign-svc/esign/shared/workflow/workflowstore"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

// store is the real workflow store on Azurite (tables of the test's own) holding w.
type store struct {
	*workflowstore.Store
	t *testing.T
}

func newStore(t *testing.T, w *workflow.Workflow) store {
	t.Helper()
	st := apptest.New(t).Workflows()
	if _, _, err := st.Create(context.Background(), w, kernel.Change{}, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	return store{Store: st, t: t}
}

// w is the stored workflow, read back.
func (s store) w() *workflow.Workflow {
	s.t.Helper()
	w, err := s.Load(context.Background(), "wf-1")
	if err != nil {
		s.t.Fatal(err)
	}
	return w
}

// events are the kinds of the workflow's audit events, in order.
func (s store) events() []string {
	s.t.Helper()
	evs, err := s.Events(context.Background(), "wf-1")
	if err != nil {
		s.t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	return kinds
}

// starter answers what it is given and counts the calls and the group id it was handed.
type starter struct {
	out   render.Started
	err   error
	calls int
	gid   string
}

func (s *starter) Start(_ context.Context, by render.Caller, tr render.Trigger, t render.Target, gid, key string) (render.Started, error) {
	s.calls++
	s.gid = gid
	if by.TenantID != "t1" || t.PDFBlobPath != "signed/t1/workflows/wf-1.pdf" || key != "workflow:wf-1" || tr.None() {
		return render.Started{}, errors.New("unexpected start")
	}
	return s.out, s.err
}

func complete(esignOn bool) *workflow.Workflow {
	w := &workflow.Workflow{ID: "wf-1", Tenant: "t1", CorrelationID: "CRM-1", State: workflow.StateComplete,
		SealedHash: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
	if esignOn {
		w.Setup.ESign = json.RawMessage(`{"enabled":true,"signers":[{"slotIndex":0,"role":"r","email":"a@example.com"}]}`)
	} else {
		w.Setup.Delivery = json.RawMessage(`{"enabled":true,"recipients":[{"email":"r@example.com"}]}`)
	}
	return w
}

// invoke runs fn on the message as the host does: the reply's status and queue outputs.
func invoke(t *testing.T, fn func(context.Context, funcproto.QueueMessage) error, tenant string) (int, map[string]json.RawMessage) {
	t.Helper()
	r := apptest.InvokeJSON(t, fn, Message{WorkflowID: "wf-1", TenantID: tenant})
	return r.Status, r.Outputs
}

func TestTriggerStartsTheSessionAndQueuesItsInvitation(t *testing.T) {
	t.Parallel()
	store := newStore(t, complete(true))
	s := &esign.Session{GroupID: "g-1", TenantID: "t1"}
	st := &starter{out: render.Started{ESignNew: true, ESign: &esign.Created{Session: s, Slots: []esign.Slot{{Index: 0, LinkJTI: "j"}},
		Change: esign.Change{Effects: []kernel.Effect{{Kind: esign.EffectInvite, Slot: 0}}}}}}
	j := &Job{Deps: Deps{Workflows: store, Starter: st, Licence: licencetest.New(t), Now: func() time.Time { return time.Unix(0, 0) }}}
	code, out := invoke(t, j.Handle, "t1")
	if w, evs := store.w(), store.events(); code != 200 || len(out["notify"]) == 0 || w.ESignGroupID != "g-1" || !slices.Equal(evs, []string{workflow.EvESignStarted}) {
		t.Fatalf("%d %s %+v %v", code, out, w, evs)
	}
	// redelivered: the trigger ended, nothing is started or queued again
	if code, out := invoke(t, j.Handle, "t1"); code != 200 || len(out) != 0 || st.calls != 1 {
		t.Fatalf("redelivery: %d %s, %d starts", code, out, st.calls)
	}
}

func TestTriggerRefusedIsRecordedOnce(t *testing.T) {
	t.Parallel()
	store := newStore(t, complete(false))
	st := &starter{err: apperr.Invalid("pdf_not_found", apperr.Field("pdfBlobPath", "no blob"))}
	j := &Job{Deps: Deps{Workflows: store, Starter: st, Licence: licencetest.New(t)}}
	if code, out := invoke(t, j.Handle, "t1"); code != 200 || len(out) != 0 || store.w().TriggerFailure != "pdf_not_found" {
		t.Fatalf("%d %s %+v", code, out, store.w())
	}
	if code, _ := invoke(t, j.HandlePoison, "t1"); code != 200 || !slices.Equal(store.events(), []string{workflow.EvTriggerFailed}) {
		t.Fatalf("poison after the failure: %d, events %v", code, store.events())
	}
}

func TestTriggerRetriesStorageAndPoisons(t *testing.T) {
	t.Parallel()
	store := newStore(t, complete(false))
	j := &Job{Deps: Deps{Workflows: store, Starter: &starter{err: errors.New("storage down")}, Licence: licencetest.New(t)}}
	if code, _ := invoke(t, j.Handle, "t1"); code != 500 || store.w().Triggered() || len(store.events()) != 0 {
		t.Fatalf("a storage failure must be retried: %d %+v", code, store.w())
	}
	if code, _ := invoke(t, j.HandlePoison, "t1"); code != 200 || store.w().TriggerFailure != "retries_exhausted" || !slices.Equal(store.events(), []string{workflow.EvTriggerFailed}) {
		t.Fatalf("poison: %d %+v %v", code, store.w(), store.events())
	}
}

func TestTriggerRefusesAnotherTenantsMessage(t *testing.T) {
	t.Parallel()
	store := newStore(t, complete(false))
	st := &starter{}
	j := &Job{Deps: Deps{Workflows: store, Starter: st, Licence: licencetest.New(t)}}
	if code, _ := invoke(t, j.Handle, "t2"); code != 200 || st.calls != 0 || store.w().Triggered() || len(store.events()) != 0 {
		t.Fatalf("another tenant's message: %d, %d starts", code, st.calls)
	}
}

// TestTriggerTheLicenceNoLongerAllows: a workflow accepted under a licence with esign and
// delivery whose licence lost the feature by the seal: nothing starts, workflow.trigger_failed
// records licence_feature_missing once, the message is acknowledged.
func TestTriggerTheLicenceNoLongerAllows(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		esignOn bool
		has     licence.Feature
	}{
		{"esign", true, licence.FeatureDelivery},
		{"delivery", false, licence.FeatureEsign},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			store := newStore(t, complete(c.esignOn))
			st := &starter{}
			j := &Job{Deps: Deps{Workflows: store, Starter: st, Licence: licencetest.New(t, c.has, licence.FeatureWorkflow)}}
			if code, out := invoke(t, j.Handle, "t1"); code != 200 || len(out) != 0 || st.calls != 0 ||
				store.w().TriggerFailure != licence.CodeFeatureMissing {
				t.Fatalf("%d %s, %d starts, %+v", code, out, st.calls, store.w())
			}
			if evs := store.events(); !slices.Equal(evs, []string{workflow.EvTriggerFailed}) {
				t.Fatalf("events %v", evs)
			}
		})
	}
}
