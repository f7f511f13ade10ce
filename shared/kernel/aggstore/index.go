package aggstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
)

// Index is the table of an aggregate kind's index rows. Every key lives in a partition of its
// own (PartitionKey: the key's kind and a hash of its scope and value), so writes spread over
// the whole account and a lookup is one point read. Safe for concurrent use.
type Index struct {
	t *tablestore.Store
}

// NewIndex opens the index table (no I/O; Ensure creates it).
func NewIndex(acct *azconn.Account, name string) (*Index, error) {
	t, err := tablestore.New(acct, name)
	if err != nil {
		return nil, err
	}
	return &Index{t: t}, nil
}

// Ensure creates the table when missing.
func (x *Index) Ensure(ctx context.Context) error { return x.t.EnsureTable(ctx) }

// Rows is the raw table.
func (x *Index) Rows() *tablestore.Store { return x.t }

// Key names one index entry: its kind ("corr"), the scope it is unique in (a tenant) and the
// value (a correlationId). Values may hold any character: only their hash reaches a key.
type Key struct {
	Kind, Scope, Value string
}

// Partition is the key's table partition, "<kind>-<hash(scope, value)>": an aggregate table
// keyed per tenant (the documents table) uses it as its own PartitionKey.
func (k Key) Partition() string { return k.partition() }

func (k Key) partition() string {
	h := sha256.Sum256([]byte(k.Scope + "\x00" + k.Value))
	return k.Kind + "-" + hex.EncodeToString(h[:16])
}

const rowClaim = "claim"

// Holding is what a claim's owner says of its claim.
type Holding int

// Holdings.
const (
	// Missing: no aggregate of the owner exists (yet: its create may still be under way).
	Missing Holding = iota
	// Held: the owner's aggregate exists and still holds the key (a live session).
	Held
	// Released: the owner's aggregate exists and no longer holds the key (it ended).
	Released
)

// HoldsFunc tells whether owner still holds its claim.
type HoldsFunc func(ctx context.Context, owner string) (Holding, error)

// TakenError is the claim of another owner that still holds the key.
type TakenError struct{ Owner string }

func (e *TakenError) Error() string { return "aggstore: key held by " + e.Owner }

// Claim takes key for owner. The first claim inserts (one call when the key is free); a key
// already claimed is read, and taken over (on its ETag) when its owner released it, or when no
// aggregate of its owner exists and the claim is older than lease (a create that died after
// claiming). A claim whose owner is Missing but younger than lease is an in-flight create of
// another request: the key is taken. So of any number of concurrent claims exactly one wins.
// Errors: *TakenError naming the holder; ErrConcurrent when the claim changed hands
// MaxAttempts times while this one looked; the tablestore ones and holds'.
func (x *Index) Claim(ctx context.Context, key Key, owner string, now time.Time, lease time.Duration, holds HoldsFunc) error {
	row := tablestore.Entity{PartitionKey: key.partition(), RowKey: rowClaim, Props: map[string]any{
		"kind": key.Kind, "scope": key.Scope, "value": key.Value, "owner": owner, "claimedAtNs": now.UnixNano()}}
	for attempt := 1; attempt <= MaxAttempts; attempt++ {
		_, err := x.t.Insert(ctx, row)
		if apperr.KindOf(err) != apperr.KindConflict {
			return err
		}
		prev, err := x.t.Get(ctx, row.PartitionKey, rowClaim)
		if apperr.KindOf(err) == apperr.KindNotFound {
			continue // released meanwhile: insert again
		}
		if err != nil {
			return err
		}
		holder := prev.String("owner")
		if holder == owner {
			return nil
		}
		h, err := holds(ctx, holder)
		if err != nil {
			return err
		}
		young := now.Sub(time.Unix(0, prev.Int64("claimedAtNs"))) < lease
		if h == Held || (h == Missing && young) {
			return &TakenError{Owner: holder}
		}
		row.ETag = prev.ETag
		_, err = x.t.Replace(ctx, row)
		row.ETag = ""
		switch apperr.KindOf(err) {
		case apperr.KindPrecondition, apperr.KindNotFound:
			continue // another claim took it over first: look again
		}
		return err
	}
	return ErrConcurrent
}

// Owner is the current owner of key's claim. Errors: apperr not-found when unclaimed; the
// tablestore ones.
func (x *Index) Owner(ctx context.Context, key Key) (string, error) {
	e, err := x.t.Get(ctx, key.partition(), rowClaim)
	if err != nil {
		return "", err
	}
	return e.String("owner"), nil
}

const prefixMember = "m-"

// AddMember lists member (an aggregate id) under key, with props (one upsert).
func (x *Index) AddMember(ctx context.Context, key Key, member string, props map[string]any) error {
	p := map[string]any{"kind": key.Kind, "scope": key.Scope, "value": key.Value, "member": member}
	for k, v := range props {
		p[k] = v
	}
	_, err := x.t.Upsert(ctx, tablestore.Entity{PartitionKey: key.partition(), RowKey: prefixMember + member, Props: p})
	return err
}

// SetMember merges props into member's row under key (one merge, whatever its ETag): the
// props it does not name stay. Errors: entity_not_found when member is not listed; the
// tablestore ones.
func (x *Index) SetMember(ctx context.Context, key Key, member string, props map[string]any) error {
	_, err := x.t.Merge(ctx, tablestore.Entity{PartitionKey: key.partition(), RowKey: prefixMember + member, Props: props, ETag: "*"})
	return err
}

// Members lists the members of key in RowKey order (one partition query over key's own rows).
func (x *Index) Members(ctx context.Context, key Key) ([]tablestore.Entity, error) {
	rows, err := x.t.Query(ctx, key.partition(), &tablestore.QueryOptions{RowKeyPrefix: prefixMember})
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, nil
	}
	var out []tablestore.Entity
	for _, r := range rows {
		// A hash collision would put another key's members here: keep only key's own.
		if r.String("scope") == key.Scope && r.String("value") == key.Value && r.String("kind") == key.Kind {
			out = append(out, r)
		}
	}
	return out, err
}
