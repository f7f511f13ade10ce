// Package workflowstore keeps workflows in Azure Table storage on the aggregate kernel
// (DESIGN 10): one partition per workflow (PartitionKey = workflowId) holding the workflow row
// and its audit rows, and one claim row per tenant and correlationId in the index table, so that
// a repeated create returns the existing workflow.
//
// The workflow row carries the state as plain properties and the personal content (every step's
// data, validation results, decisions with comments and justifications, change requests) as one
// JSON document encrypted with pii.Cipher, split over properties of at most chunkChars
// characters. One row, not one per step: the machine needs all the data at every final advance,
// governance decision and seal, so Load stays one point read and Update one conditional write;
// the machine bounds the content to workflow.MaxContentBytes (320 KiB of JSON), whose ciphertext
// (base64, 4/3) stored as UTF-16 strings (2 bytes a character) stays under the service's 1 MiB
// entity limit, and no property exceeds its 64 KiB limit.
package workflowstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/event"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
	"github.com/esign-svc/esign/shared/workflow"
)

// Default table names.
const (
	TableWorkflows = "workflows"
	TableIndex     = "workflowindex"
)

const (
	rowWorkflow = "workflow"
	// chunkChars is the most characters one content property holds: 30,000 UTF-16 code units
	// are 60,000 bytes, under the 64 KiB property limit.
	chunkChars = 30_000
	// ClaimLease is how long a correlationId claim whose workflow row is not written yet counts
	// as a create under way.
	ClaimLease = 2 * time.Minute
)

// ErrNotFound is a workflow that does not exist (the domain's, which the use cases also answer
// for another tenant's).
var ErrNotFound = workflow.ErrNotFound

// Cipher encrypts the personal content (pii.Cipher).
type Cipher interface {
	Encrypt(plaintext, aad []byte) (string, error)
	Decrypt(ciphertext string, aad []byte) ([]byte, error)
}

// Store is the table-backed workflow store. Safe for concurrent use.
type Store struct {
	tab   *aggstore.Table[*workflow.Workflow]
	index *aggstore.Index
}

// New opens the store on two tables of the account (no I/O; Ensure creates them).
func New(acct *azconn.Account, workflowsTable, indexTable string, c Cipher) (*Store, error) {
	kind := aggstore.Kind[*workflow.Workflow]{
		Root:     rowWorkflow,
		NotFound: ErrNotFound,
		ID:       func(w *workflow.Workflow) string { return w.ID },
		Encode:   func(w *workflow.Workflow) (tablestore.Entity, error) { return encode(w, c) },
		Decode:   func(e tablestore.Entity) (*workflow.Workflow, error) { return decode(e, c) },
		// Integrator events (DESIGN 17): an outbox row with each published audit event.
		Publish: event.Map, Object: "workflow",
		Tenant: func(w *workflow.Workflow) string { return w.Tenant },
		State:  func(w *workflow.Workflow) string { return string(w.State) },
	}
	tab, index, err := aggstore.Open(acct, workflowsTable, indexTable, kind)
	if err != nil {
		return nil, err
	}
	return &Store{tab: tab, index: index}, nil
}

// Ensure creates the tables when missing.
func (s *Store) Ensure(ctx context.Context) error { return aggstore.Ensure(ctx, s.tab, s.index) }

func correlationKey(tenant, correlationID string) aggstore.Key {
	return aggstore.Key{Kind: "wfcorr", Scope: tenant, Value: correlationID}
}

// Create stores a new workflow with the events of its Create change, after claiming the
// tenant's correlationId. A correlationId the tenant used before returns that workflow and
// created false (the spec's 200 idempotent: true), with nothing written. Errors:
// aggstore.ErrConcurrent when another create of the correlationId is under way (ClaimLease);
// the tablestore ones.
func (s *Store) Create(ctx context.Context, w *workflow.Workflow, ch kernel.Change, now time.Time) (stored *workflow.Workflow, created bool, err error) {
	err = s.index.Claim(ctx, correlationKey(w.Tenant, w.CorrelationID), w.ID, now, ClaimLease, s.holds)
	var taken *aggstore.TakenError
	if errors.As(err, &taken) {
		prev, err := s.tab.Load(ctx, taken.Owner)
		if errors.Is(err, ErrNotFound) {
			return nil, false, aggstore.ErrConcurrent // the other create has not written its row yet
		}
		if err != nil {
			return nil, false, err
		}
		return prev, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := s.tab.Create(ctx, w, ch); err != nil {
		return nil, false, err
	}
	return w, true, nil
}

// holds: a workflow keeps its correlationId for good once its row exists.
func (s *Store) holds(ctx context.Context, id string) (aggstore.Holding, error) {
	_, err := s.tab.Load(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return aggstore.Missing, nil
	case err != nil:
		return 0, err
	}
	return aggstore.Held, nil
}

// Load reads a workflow (one point read). Errors: ErrNotFound; a decode error for a corrupt or
// undecryptable row; the tablestore ones.
func (s *Store) Load(ctx context.Context, id string) (*workflow.Workflow, error) {
	return s.tab.Load(ctx, id)
}

// The one Update shape of the stores (issue 23).
var _ kernel.Updater[*workflow.Workflow, func(*workflow.Workflow) (kernel.Change, error)] = (*Store)(nil)

// Update loads the workflow, runs step and writes its change with the kernel's bounded retry
// (aggstore.MaxAttempts). A step error comes back with nothing written.
func (s *Store) Update(ctx context.Context, id string, step func(*workflow.Workflow) (kernel.Change, error)) (*workflow.Workflow, kernel.Change, error) {
	return s.tab.Update(ctx, id, aggstore.Plain(step))
}

// Events is the workflow's audit trail, oldest first.
func (s *Store) Events(ctx context.Context, id string) ([]audit.Record, error) {
	return s.tab.Events(ctx, id)
}

func contentAAD(id string) []byte { return []byte("workflow\x00" + id + "\x00content") }

func encode(w *workflow.Workflow, c Cipher) (tablestore.Entity, error) {
	plain, err := json.Marshal(w.Content)
	if err != nil {
		return tablestore.Entity{}, err
	}
	enc, err := c.Encrypt(plain, contentAAD(w.ID))
	if err != nil {
		return tablestore.Entity{}, err
	}
	ns := kernel.Nanos
	props := map[string]any{
		"tenantId": w.Tenant, "correlationId": w.CorrelationID, "templatePath": w.TemplatePath, "createdBy": w.CreatedBy,
		"createdByHash": w.CreatorHash, "state": string(w.State), "step": int64(w.Step), "totalSteps": int64(w.TotalSteps), "outcome": string(w.Outcome),
		"stage": int64(w.Stage), "totalStages": int64(w.TotalStages), "approver": int64(w.Approver), "round": int64(w.Round),
		"sealedPath": w.SealedPath, "sealedHash": w.SealedHash, "esignGroupId": w.ESignGroupID,
		"deliveryIds": strings.Join(w.DeliveryIDs, ","), "triggerFailure": w.TriggerFailure,
		"linkGen":     int64(w.LinkGen),
		"createdAtNs": ns(w.CreatedAt), "updatedAtNs": ns(w.UpdatedAt), "completedAtNs": ns(w.CompletedAt),
	}
	n := 0
	for ; len(enc) > 0; n++ { // the ciphertext is ASCII: a character is a byte
		k := min(len(enc), chunkChars)
		props["contentEnc"+strconv.Itoa(n)], enc = enc[:k], enc[k:]
	}
	props["contentChunks"] = int64(n)
	return tablestore.Entity{PartitionKey: w.ID, RowKey: rowWorkflow, ETag: w.ETag, Props: props}, nil
}

func decode(e tablestore.Entity, c Cipher) (*workflow.Workflow, error) {
	at := kernel.FromNanos
	w := &workflow.Workflow{
		ID: e.PartitionKey, Tenant: e.String("tenantId"), CorrelationID: e.String("correlationId"),
		TemplatePath: e.String("templatePath"), CreatedBy: e.String("createdBy"), CreatorHash: e.String("createdByHash"), State: workflow.State(e.String("state")),
		Step: int(e.Int64("step")), TotalSteps: int(e.Int64("totalSteps")), Outcome: workflow.Outcome(e.String("outcome")),
		Stage: int(e.Int64("stage")), TotalStages: int(e.Int64("totalStages")), Approver: int(e.Int64("approver")),
		Round: int(e.Int64("round")), SealedPath: e.String("sealedPath"), SealedHash: e.String("sealedHash"),
		ESignGroupID: e.String("esignGroupId"), TriggerFailure: e.String("triggerFailure"),
		LinkGen: int(e.Int64("linkGen")), CreatedAt: at(e.Int64("createdAtNs")), UpdatedAt: at(e.Int64("updatedAtNs")), CompletedAt: at(e.Int64("completedAtNs")),
		ETag: e.ETag,
	}
	if ids := e.String("deliveryIds"); ids != "" {
		w.DeliveryIDs = strings.Split(ids, ",")
	}
	var enc []byte
	for i := range int(e.Int64("contentChunks")) {
		enc = append(enc, e.String("contentEnc"+strconv.Itoa(i))...)
	}
	plain, err := c.Decrypt(string(enc), contentAAD(w.ID))
	if err != nil {
		return nil, fmt.Errorf("workflowstore: %s content: %w", w.ID, err)
	}
	dec := json.NewDecoder(bytes.NewReader(plain))
	dec.UseNumber() // numbers as the participant wrote them
	if err := dec.Decode(&w.Content); err != nil {
		return nil, fmt.Errorf("workflowstore: %s content: %w", w.ID, err)
	}
	return w, nil
}
