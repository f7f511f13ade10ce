// Package tablestore is the table adapter: one Store per table, entities with typed properties
// (see Entity), ETag-conditional writes, paged queries and all-or-nothing entity-group
// transactions (Transact).
//
// Errors are *apperr.Error values: KindNotFound with code entity_not_found (or table_not_found),
// KindConflict with code entity_exists, KindPrecondition with code precondition_failed,
// KindTooLarge (property_too_large, entity_too_large) and KindInvalid (invalid_entity_key)
// checked before anything is sent; anything else is KindInternal with the SDK error as cause.
package tablestore

import (
	"context"
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/esign-svc/esign/shared/azure/azconn"
)

// Store reads and writes one table. It is safe for concurrent use.
type Store struct {
	name   string
	svc    *aztables.ServiceClient
	client *aztables.Client
}

// New makes a Store for the table name (3-63 letters and digits, starting with a letter). It
// does no I/O: call EnsureTable at start.
func New(acct *azconn.Account, name string) (*Store, error) {
	if !validTableName(name) {
		return nil, fmt.Errorf("tablestore: table name %q must be 3-63 letters and digits, starting with a letter", name)
	}
	return &Store{name: name, svc: acct.Tables(), client: acct.Tables().NewClient(name)}, nil
}

// Name is the table's name.
func (s *Store) Name() string { return s.name }

// EnsureTable creates the table if it does not exist.
func (s *Store) EnsureTable(ctx context.Context) error {
	_, err := s.client.CreateTable(ctx, nil)
	if err == nil {
		return nil
	}
	if e := asResponse(err); e != nil && (e.ErrorCode == string(aztables.TableAlreadyExists) || e.StatusCode == 409) {
		return nil
	}
	return translate(err, "create table", s.name)
}

// Get reads one entity. Errors: entity_not_found (KindNotFound), table_not_found.
func (s *Store) Get(ctx context.Context, partitionKey, rowKey string) (Entity, error) {
	if err := checkKey("PartitionKey", partitionKey); err != nil {
		return Entity{}, err
	}
	if err := checkKey("RowKey", rowKey); err != nil {
		return Entity{}, err
	}
	resp, err := s.client.GetEntity(ctx, partitionKey, rowKey, nil)
	if err != nil {
		return Entity{}, translate(err, "get", s.name)
	}
	return parseEntity(resp.Value, string(resp.ETag))
}

// Insert adds a new entity and returns its ETag. Errors: entity_exists (KindConflict) when the
// row is there, the size and key errors, table_not_found.
func (s *Store) Insert(ctx context.Context, e Entity) (string, error) {
	body, err := e.marshal()
	if err != nil {
		return "", err
	}
	resp, err := s.client.AddEntity(ctx, body, nil)
	if err != nil {
		return "", translate(err, "insert", s.name)
	}
	return string(resp.ETag), nil
}

// Replace overwrites the whole entity (properties not in e.Props are removed) if its ETag still
// is e.ETag, and returns the new ETag. e.ETag "*" replaces unconditionally; an empty ETag is
// refused (use Upsert to write without a condition). Errors: precondition_failed
// (KindPrecondition) when the row changed, entity_not_found when it is gone.
func (s *Store) Replace(ctx context.Context, e Entity) (string, error) {
	return s.update(ctx, e, aztables.UpdateModeReplace)
}

// Merge is Replace that keeps the properties e.Props does not name.
func (s *Store) Merge(ctx context.Context, e Entity) (string, error) {
	return s.update(ctx, e, aztables.UpdateModeMerge)
}

func (s *Store) update(ctx context.Context, e Entity, mode aztables.UpdateMode) (string, error) {
	if e.ETag == "" {
		return "", fmt.Errorf("tablestore: %s needs the entity's ETag (or \"*\")", mode)
	}
	body, err := e.marshal()
	if err != nil {
		return "", err
	}
	etag := azcore.ETag(e.ETag)
	resp, err := s.client.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: mode})
	if err != nil {
		return "", translate(err, "update", s.name)
	}
	return string(resp.ETag), nil
}

// Upsert inserts the entity or replaces it whatever its ETag, and returns the new ETag.
func (s *Store) Upsert(ctx context.Context, e Entity) (string, error) {
	body, err := e.marshal()
	if err != nil {
		return "", err
	}
	resp, err := s.client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
	if err != nil {
		return "", translate(err, "upsert", s.name)
	}
	return string(resp.ETag), nil
}

// Delete removes the entity if its ETag still is etag ("" or "*": unconditionally).
// Errors: entity_not_found when the row is missing (callers that do not care match the kind),
// precondition_failed when it changed.
func (s *Store) Delete(ctx context.Context, partitionKey, rowKey, etag string) error {
	if err := checkKey("PartitionKey", partitionKey); err != nil {
		return err
	}
	if err := checkKey("RowKey", rowKey); err != nil {
		return err
	}
	m := azcore.ETagAny
	if etag != "" {
		m = azcore.ETag(etag)
	}
	_, err := s.client.DeleteEntity(ctx, partitionKey, rowKey, &aztables.DeleteEntityOptions{IfMatch: &m})
	return translate(err, "delete", s.name)
}

func validTableName(n string) bool {
	if len(n) < 3 || len(n) > 63 || n[0] < 'A' || (n[0] > 'Z' && n[0] < 'a') || n[0] > 'z' {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func asResponse(err error) *azcore.ResponseError {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re
	}
	return nil
}
