package workflowtrigger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/workflow"
	"github.com/esign-svc/esign/shared/workflow/workflowstore"
)

// memWorkflows keeps one workflow in memory and records the events of each update.
type memWorkflows struct {
	w      *workflow.Workflow
	events []string
}

func (m *memWorkflows) Load(_ context.Context, id string) (*workflow.Workflow, error) {
	if m.w == nil || m.w.ID != id {
		return nil, workflowstore.ErrNotFound
	}
	c := *m.w
	return &c, nil
}

func (m *memWorkflows) Update(ctx context.Context, id string, step func(*workflow.Workflow) (kernel.Change, error)) (*workflow.Workflow, kernel.Change, error) {
	w, err := m.Load(ctx, id)
	if err != nil {
		return nil, kernel.Change{}, err
	}
	ch, err := step(w)
	if err != nil {
		return nil, kernel.Change{}, err
	}
	for _, e := range ch.Events {
		m.events = append(m.events, e.Kind)
	}
	m.w = w
	return w, ch, nil
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
	msg, _ := json.Marshal(Message{WorkflowID: "wf-1", TenantID: tenant})
	body, _ := json.Marshal(map[string]any{"Data": map[string]any{"msg": string(msg)}, "Metadata": map[string]any{"DequeueCount": 1}})
	rec := httptest.NewRecorder()
	funcproto.QueueHandler(fn).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/"+FunctionName, bytes.NewReader(body)))
	var reply struct{ Outputs map[string]json.RawMessage }
	_ = json.Unmarshal(rec.Body.Bytes(), &reply)
	return rec.Code, reply.Outputs
}

func TestTriggerStartsTheSessionAndQueuesItsInvitation(t *testing.T) {
	t.Parallel()
	store := &memWorkflows{w: complete(true)}
	s := &esign.Session{GroupID: "g-1", TenantID: "t1"}
	st := &starter{out: render.Started{ESignNew: true, ESign: &esign.Created{Session: s, Slots: []esign.Slot{{Index: 0, LinkJTI: "j"}},
		Change: esign.Change{Effects: []kernel.Effect{{Kind: esign.EffectInvite, Slot: 0}}}}}}
	j := &Job{Workflows: store, Starter: st, Licence: licencetest.New(t), Now: func() time.Time { return time.Unix(0, 0) }}
	code, out := invoke(t, j.Handle, "t1")
	if code != 200 || len(out["notify"]) == 0 || store.w.ESignGroupID != "g-1" || len(store.events) != 1 || store.events[0] != workflow.EvESignStarted {
		t.Fatalf("%d %s %+v %v", code, out, store.w, store.events)
	}
	// redelivered: the trigger ended, nothing is started or queued again
	if code, out := invoke(t, j.Handle, "t1"); code != 200 || len(out) != 0 || st.calls != 1 {
		t.Fatalf("redelivery: %d %s, %d starts", code, out, st.calls)
	}
}

func TestTriggerRefusedIsRecordedOnce(t *testing.T) {
	t.Parallel()
	store := &memWorkflows{w: complete(false)}
	st := &starter{err: apperr.Invalid("pdf_not_found", apperr.Field("pdfBlobPath", "no blob"))}
	j := &Job{Workflows: store, Starter: st, Licence: licencetest.New(t)}
	if code, out := invoke(t, j.Handle, "t1"); code != 200 || len(out) != 0 || store.w.TriggerFailure != "pdf_not_found" {
		t.Fatalf("%d %s %+v", code, out, store.w)
	}
	if code, _ := invoke(t, j.HandlePoison, "t1"); code != 200 || len(store.events) != 1 {
		t.Fatalf("poison after the failure: %d, events %v", code, store.events)
	}
}

func TestTriggerRetriesStorageAndPoisons(t *testing.T) {
	t.Parallel()
	store := &memWorkflows{w: complete(false)}
	j := &Job{Workflows: store, Starter: &starter{err: errors.New("storage down")}, Licence: licencetest.New(t)}
	if code, _ := invoke(t, j.Handle, "t1"); code != 500 || store.w.Triggered() {
		t.Fatalf("a storage failure must be retried: %d %+v", code, store.w)
	}
	if code, _ := invoke(t, j.HandlePoison, "t1"); code != 200 || store.w.TriggerFailure != "retries_exhausted" {
		t.Fatalf("poison: %d %+v", code, store.w)
	}
}

func TestTriggerRefusesAnotherTenantsMessage(t *testing.T) {
	t.Parallel()
	store := &memWorkflows{w: complete(false)}
	st := &starter{}
	j := &Job{Workflows: store, Starter: st, Licence: licencetest.New(t)}
	if code, _ := invoke(t, j.Handle, "t2"); code != 200 || st.calls != 0 || store.w.Triggered() {
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
			store := &memWorkflows{w: complete(c.esignOn)}
			st := &starter{}
			j := &Job{Workflows: store, Starter: st, Licence: licencetest.New(t, c.has, licence.FeatureWorkflow)}
			if code, out := invoke(t, j.Handle, "t1"); code != 200 || len(out) != 0 || st.calls != 0 ||
				store.w.TriggerFailure != licence.CodeFeatureMissing {
				t.Fatalf("%d %s, %d starts, %+v", code, out, st.calls, store.w)
			}
			if len(store.events) != 1 || store.events[0] != workflow.EvTriggerFailed {
				t.Fatalf("events %v", store.events)
			}
		})
	}
}
