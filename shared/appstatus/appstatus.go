// Package appstatus keeps what an app found at its start that leaves part of the service off
// (a setting that part needs is not set), so that the dispatcher's /api/health can say so
// though the setting is another app's: the processor's WEBHOOK_SECRETS, without which no
// workflow callback is sent. One row per app and feature in one table; an app rewrites its
// rows at every start, so the last start of each app is what the table says.
package appstatus

import (
	"context"
	"sort"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
)

// Table is the default table name.
const Table = "appstatus"

// Apps and features recorded.
const (
	AppProcessor = "processor"
	// FeatureWorkflowCallbacks is the workflows' terminal callbacks (spec "Workflow", Events 1):
	// off when the processor has no WEBHOOK_SECRETS.
	FeatureWorkflowCallbacks = "workflowCallbacks"
)

// Notice is what an app found of one feature at its start.
type Notice struct {
	App, Feature string
	// Reason says why the feature is off, in a sentence naming the setting; "" when it is on.
	// It is shown to anyone who asks /api/health: it names settings, never their values.
	Reason string
	At     time.Time // when the app started
}

// Store reads and writes the notices. Safe for concurrent use.
type Store struct{ t *tablestore.Store }

// New makes a Store on table (no I/O: the writing app calls Ensure at start).
func New(acct *azconn.Account, table string) (*Store, error) {
	t, err := tablestore.New(acct, table)
	if err != nil {
		return nil, err
	}
	return &Store{t: t}, nil
}

// Ensure creates the table when missing. Errors: storage.
func (s *Store) Ensure(ctx context.Context) error { return s.t.EnsureTable(ctx) }

// Record writes n over what its app recorded of its feature before. Errors: storage, keys
// (an empty App or Feature).
func (s *Store) Record(ctx context.Context, n Notice) error {
	_, err := s.t.Upsert(ctx, tablestore.Entity{PartitionKey: n.App, RowKey: n.Feature,
		Props: map[string]any{"reason": n.Reason, "at": n.At.UTC()}})
	return err
}

// Off lists the features an app found off at its last start, by feature then app. A table no
// app has created yet holds none. Errors: storage.
func (s *Store) Off(ctx context.Context) ([]Notice, error) {
	var out []Notice
	err := s.t.Each(ctx, "", nil, func(e tablestore.Entity) error {
		if r := e.String("reason"); r != "" {
			out = append(out, Notice{App: e.PartitionKey, Feature: e.RowKey, Reason: r, At: e.Time("at")})
		}
		return nil
	})
	if e, ok := apperr.As(err); ok && e.Code == tablestore.CodeTableNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Feature != out[j].Feature {
			return out[i].Feature < out[j].Feature
		}
		return out[i].App < out[j].App
	})
	return out, nil
}
