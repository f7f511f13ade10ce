package tablestore

import (
	"context"
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
)

// OpKind is what one operation of a transaction does.
type OpKind string

// Operation kinds.
const (
	OpInsert  OpKind = "insert"  // add; fails with entity_exists if the row is there
	OpReplace OpKind = "replace" // overwrite if the ETag matches ("*": any)
	OpMerge   OpKind = "merge"   // merge properties if the ETag matches ("*": any)
	OpUpsert  OpKind = "upsert"  // insert or replace, no condition
	OpDelete  OpKind = "delete"  // delete if the ETag matches ("" or "*": any)
)

// Op is one operation of an entity-group transaction.
type Op struct {
	Kind   OpKind
	Entity Entity // for OpDelete only the keys and ETag count
}

// InsertOp adds e.
func InsertOp(e Entity) Op { return Op{Kind: OpInsert, Entity: e} }

// ReplaceOp overwrites e if its ETag (e.ETag, required) still matches.
func ReplaceOp(e Entity) Op { return Op{Kind: OpReplace, Entity: e} }

// MergeOp merges e's properties if its ETag (e.ETag, required) still matches.
func MergeOp(e Entity) Op { return Op{Kind: OpMerge, Entity: e} }

// UpsertOp inserts or replaces e.
func UpsertOp(e Entity) Op { return Op{Kind: OpUpsert, Entity: e} }

// DeleteOp deletes the row if its ETag still is etag ("" or "*": unconditionally).
func DeleteOp(rowKey, etag string) Op {
	return Op{Kind: OpDelete, Entity: Entity{RowKey: rowKey, ETag: etag}}
}

// Transact runs ops as one entity-group transaction in the partition: all of them happen or
// none does. Entities may leave PartitionKey empty (it is filled in); every row key may appear
// once; at most MaxBatchOps operations.
//
// When an operation fails nothing is written and the error is the failing operation's domain
// error: entity_exists (KindConflict) for an insert of an existing row, precondition_failed
// (KindPrecondition) for a stale ETag, entity_not_found for a conditional update or delete of a
// missing row, plus the size and key errors, checked before sending. FailedOp tells which
// operation failed. The service returns no ETags for a transaction: read the rows again to
// continue conditionally.
func (s *Store) Transact(ctx context.Context, partitionKey string, ops []Op) error {
	if len(ops) == 0 {
		return nil
	}
	if len(ops) > MaxBatchOps {
		return fmt.Errorf("tablestore: a transaction holds at most %d operations, got %d", MaxBatchOps, len(ops))
	}
	if err := checkKey("PartitionKey", partitionKey); err != nil {
		return err
	}
	actions := make([]aztables.TransactionAction, len(ops))
	rows := make(map[string]bool, len(ops))
	total := 0
	for i, op := range ops {
		e := op.Entity
		if e.PartitionKey == "" {
			e.PartitionKey = partitionKey
		}
		if e.PartitionKey != partitionKey {
			return fmt.Errorf("tablestore: transaction operation %d is in another partition", i)
		}
		if rows[e.RowKey] {
			return fmt.Errorf("tablestore: transaction operation %d repeats a row key", i)
		}
		rows[e.RowKey] = true
		a := aztables.TransactionAction{}
		switch op.Kind {
		case OpInsert:
			a.ActionType = aztables.TransactionTypeAdd
		case OpUpsert:
			a.ActionType = aztables.TransactionTypeInsertReplace
		case OpReplace, OpMerge:
			if e.ETag == "" {
				return fmt.Errorf("tablestore: transaction operation %d (%s) needs an ETag (or \"*\")", i, op.Kind)
			}
			a.ActionType = aztables.TransactionTypeUpdateReplace
			if op.Kind == OpMerge {
				a.ActionType = aztables.TransactionTypeUpdateMerge
			}
			a.IfMatch = etagPtr(e.ETag)
		case OpDelete:
			a.ActionType = aztables.TransactionTypeDelete
			if e.ETag != "" {
				a.IfMatch = etagPtr(e.ETag)
			}
			e = Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey}
		default:
			return fmt.Errorf("tablestore: transaction operation %d has unknown kind %q", i, op.Kind)
		}
		body, err := e.marshal()
		if err != nil {
			return err
		}
		a.Entity = body
		total += len(body) + 512 // the body plus its part's request line and headers
		actions[i] = a
	}
	if total > maxBatchBytes {
		return tooLarge(CodeEntityTooLarge, "the transaction is about %d bytes; the limit is %d", total, maxBatchBytes)
	}
	_, err := s.client.SubmitTransaction(ctx, actions, nil)
	if err == nil {
		return nil
	}
	return s.translateBatch(err, ops)
}

// OpError is the cause inside a Transact error: which operation failed and the service's code.
type OpError struct {
	Index       int // -1 when the service did not say
	Kind        OpKind
	ServiceCode string
	Status      int
}

func (e *OpError) Error() string {
	return fmt.Sprintf("transaction operation %d (%s) failed: %d %s", e.Index, e.Kind, e.Status, e.ServiceCode)
}

// FailedOp returns the index of the operation that failed a Transact, when known.
func FailedOp(err error) (int, bool) {
	var oe *OpError
	if errors.As(err, &oe) && oe.Index >= 0 {
		return oe.Index, true
	}
	return 0, false
}

func (s *Store) translateBatch(err error, ops []Op) error {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return apperr.Wrap(err, apperr.KindInternal, azconn.CodeStorageError, "table %s: transaction", s.name)
	}
	f := parseBatchFailure(re)
	oe := &OpError{Index: f.index, ServiceCode: f.code, Status: f.status}
	if f.index >= 0 && f.index < len(ops) {
		oe.Kind = ops[f.index].Kind
	}
	cause := fmt.Errorf("%w: %w", oe, err)
	if e := classify(cause, f.code, f.status, s.name); e != nil {
		if f.index >= 0 {
			e.Detail += fmt.Sprintf(" (transaction operation %d)", f.index)
		}
		return e
	}
	return apperr.Wrap(cause, apperr.KindInternal, azconn.CodeStorageError, "table %s: transaction", s.name)
}

func etagPtr(s string) *azcore.ETag { e := azcore.ETag(s); return &e }
