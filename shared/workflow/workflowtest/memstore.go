// Package workflowtest gives the use cases' tests (workflow.Workflows) a workflow store in
// memory that counts its reads and writes, so a test can pin how often a transition loads the
// workflow without Azurite.
package workflowtest

import (
	"context"
	"slices"
	"time"

	"github.com/esign-svc/esign/shared/audit"

	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/workflow"
)

// MemStore holds one workflow (workflow.Repo). Reads counts Load calls and the read Update
// makes before its step; Writes the changes stored; Stored is the last one; Trail every audit
// event written, oldest first; Notices the notice keys sent. Not safe for concurrent use.
type MemStore struct {
	W       workflow.Workflow
	Reads   int
	Writes  int
	Stored  kernel.Change
	Trail   []audit.Record
	Notices map[string]bool
}

var _ workflow.Repo = (*MemStore)(nil)

// keep appends events to the trail.
func (m *MemStore) keep(events []kernel.Event) {
	for _, e := range events {
		m.Trail = append(m.Trail, audit.Record{Kind: e.Kind, At: e.At, Slot: e.Slot, ActorKind: e.Actor.Kind, ActorID: e.Actor.ID, Data: e.Data})
	}
}

// Events is the trail; another id has none.
func (m *MemStore) Events(_ context.Context, id string) ([]audit.Record, error) {
	if id != m.W.ID {
		return nil, nil
	}
	return slices.Clone(m.Trail), nil
}

// Record appends events to the trail of the workflow held (workflow.ErrNotFound for another id).
func (m *MemStore) Record(_ context.Context, id string, events []kernel.Event) error {
	if id != m.W.ID {
		return workflow.ErrNotFound
	}
	m.keep(events)
	return nil
}

// SendNotice runs send once per key: a key sent before is workflow.ErrNoticeSent; a failed
// send leaves the key unsent.
func (m *MemStore) SendNotice(_ context.Context, id, key string, _ time.Time, _ time.Duration, send func() ([]kernel.Event, error)) error {
	if m.Notices[id+"/"+key] {
		return workflow.ErrNoticeSent
	}
	events, err := send()
	if err != nil {
		return err
	}
	if m.Notices == nil {
		m.Notices = map[string]bool{}
	}
	m.Notices[id+"/"+key] = true
	m.keep(events)
	return nil
}

// Create keeps w and its change; a workflow already held is returned with created false.
func (m *MemStore) Create(_ context.Context, w *workflow.Workflow, ch kernel.Change, _ time.Time) (*workflow.Workflow, bool, error) {
	if m.W.ID != "" {
		x := m.W
		return &x, false, nil
	}
	m.W, m.Stored = *w, ch
	m.Writes++
	m.keep(ch.Events)
	return w, true, nil
}

// Load is a copy of the workflow; another id is workflow.ErrNotFound.
func (m *MemStore) Load(_ context.Context, id string) (*workflow.Workflow, error) {
	m.Reads++
	if id != m.W.ID {
		return nil, workflow.ErrNotFound
	}
	x := m.W
	return &x, nil
}

// Update loads the workflow, runs step and keeps the workflow and its change unless step
// fails.
func (m *MemStore) Update(ctx context.Context, id string, step func(*workflow.Workflow) (kernel.Change, error)) (*workflow.Workflow, kernel.Change, error) {
	x, err := m.Load(ctx, id)
	if err != nil {
		return nil, kernel.Change{}, err
	}
	ch, err := step(x)
	if err != nil {
		return nil, kernel.Change{}, err
	}
	m.W, m.Stored = *x, ch
	m.Writes++
	m.keep(ch.Events)
	return x, ch, nil
}
