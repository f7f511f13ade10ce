package sessionstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
)

// Cross-device tokens (DESIGN 4): only the token's SHA-256 (hex) is stored, as a row
// "xfer-<hash>" in the session's partition (committed with the slot.transfer_created event),
// and an index row (partition "xfer", RowKey the hash) that tells the redeem which session to
// load. Redeeming deletes the partition row on its ETag in the same transaction as the slot's
// change, so a token is used at most once however many devices race; the index row is then
// removed best effort (a stale index row leads to no partition row, which reads as unknown).
const (
	prefixTransfer = "xfer-"
	pkTransfer     = "xfer"
)

func transferKey(hash string) string { return prefixTransfer + hash }

// validHash accepts the lowercase hex SHA-256 that tokens.OpaqueHash makes, so nothing else
// ever reaches a key.
func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	return strings.Trim(h, "0123456789abcdef") == ""
}

// IndexTransfer writes the index row of a new cross-device token (before the transaction that
// stores the token itself). Errors: 400 transfer_hash_invalid for a hash that is not 64 hex
// digits; the tablestore ones.
func (s *Store) IndexTransfer(ctx context.Context, groupID string, t esign.Transfer) error {
	if !validHash(t.Hash) {
		return apperr.New(apperr.KindInvalid, "transfer_hash_invalid", "a transfer hash is 64 lowercase hex digits")
	}
	_, err := s.idx.Upsert(ctx, tablestore.Entity{PartitionKey: pkTransfer, RowKey: t.Hash,
		Props: map[string]any{"groupId": groupID, "expiresAtNs": t.ExpiresAt.UnixNano()}})
	return err
}

// TransferOp is the extra operation (for Update or Apply) that stores a new cross-device token
// in the session's partition.
func TransferOp(groupID string, t esign.Transfer) tablestore.Op {
	return tablestore.InsertOp(tablestore.Entity{PartitionKey: groupID, RowKey: transferKey(t.Hash), Props: map[string]any{
		"slotIndex": int64(t.Slot), "generation": int64(t.Generation),
		"createdAtNs": t.CreatedAt.UnixNano(), "expiresAtNs": t.ExpiresAt.UnixNano(),
	}})
}

// RedeemOp is the extra operation that consumes a cross-device token: a delete on the ETag it
// was read with, so that of two redeems in a race only one transaction commits.
func RedeemOp(groupID string, t esign.Transfer) tablestore.Op {
	return tablestore.DeleteOp(transferKey(t.Hash), t.ETag)
}

// TransferGroup finds the session of a cross-device token by its hash. Errors:
// esign.ErrTransferInvalid when no index row has it (or the hash is malformed); the tablestore
// ones.
func (s *Store) TransferGroup(ctx context.Context, hash string) (string, error) {
	if !validHash(hash) {
		return "", esign.ErrTransferInvalid
	}
	e, err := s.idx.Get(ctx, pkTransfer, hash)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return "", esign.ErrTransferInvalid
	}
	if err != nil {
		return "", err
	}
	return e.String("groupId"), nil
}

// Transfer reads a stored cross-device token of a session, with its ETag. Errors:
// esign.ErrTransferInvalid when it is not there (never stored, or used); the tablestore ones.
func (s *Store) Transfer(ctx context.Context, groupID, hash string) (esign.Transfer, error) {
	if groupID == "" || !validHash(hash) {
		return esign.Transfer{}, esign.ErrTransferInvalid
	}
	e, err := s.t.Get(ctx, groupID, transferKey(hash))
	if apperr.KindOf(err) == apperr.KindNotFound {
		return esign.Transfer{}, esign.ErrTransferInvalid
	}
	if err != nil {
		return esign.Transfer{}, err
	}
	return esign.Transfer{Hash: hash, Slot: int(e.Int64("slotIndex")), Generation: int(e.Int64("generation")),
		CreatedAt: fromNs(e.Int64("createdAtNs")), ExpiresAt: fromNs(e.Int64("expiresAtNs")), ETag: e.ETag}, nil
}

// ForgetTransfer removes a token's index row (after its redeem); a missing row is no error.
func (s *Store) ForgetTransfer(ctx context.Context, hash string) error {
	if !validHash(hash) {
		return nil
	}
	err := s.idx.Delete(ctx, pkTransfer, hash, "")
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil
	}
	return err
}

// SweepTransfers deletes up to limit transfer tokens that expired before now without being
// redeemed: their row in the session's partition and their index row. It returns how many it
// removed. (A redeemed token's rows are already gone.)
func (s *Store) SweepTransfers(ctx context.Context, now time.Time, limit int) (int, error) {
	rows, err := s.idx.Query(ctx, pkTransfer, &tablestore.QueryOptions{
		Filter: fmt.Sprintf("expiresAtNs lt %dL", now.UnixNano()), Limit: limit})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		if groupID := r.String("groupId"); groupID != "" {
			err := s.t.Delete(ctx, groupID, transferKey(r.RowKey), "")
			if err != nil && apperr.KindOf(err) != apperr.KindNotFound {
				return n, err
			}
		}
		if err := s.ForgetTransfer(ctx, r.RowKey); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
