// Package workflowtest gives the use cases' tests (workflow.Service) a workflow store in
// memory that counts its reads and writes, so a test can pin how often a transition loads the
// workflow without Azurite.
package workflowtest

import (
	"context"
	"time"

	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/workflow"
)

// MemStore holds one workflow (workflow.Repo). Reads counts Load calls and the read Update
// makes before its step; Writes the changes stored; Stored is the last one. Not safe for
// concurrent use.
type MemStore struct {
	W      workflow.Workflow
	Reads  int
	Writes int
	Stored kernel.Change
}

// Create keeps w and its change; a workflow already held is returned with created false.
func (m *MemStore) Create(_ context.Context, w *workflow.Workflow, ch kernel.Change, _ time.Time) (*workflow.Workflow, bool, error) {
	if m.W.ID != "" {
		x := m.W
		return &x, false, nil
	}
	m.W, m.Stored = *w, ch
	m.Writes++
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
	return x, ch, nil
}
