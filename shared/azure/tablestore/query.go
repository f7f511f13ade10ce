package tablestore

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// QueryOptions narrow a query.
type QueryOptions struct {
	// RowKeyPrefix keeps rows whose RowKey starts with it (a range on the key, served by the
	// index).
	RowKeyPrefix string
	// Filter is an extra OData filter ANDed to the key conditions, e.g.
	// "state eq 'pending' and expiresAt lt datetime'2024-01-01T00:00:00Z'". Build string
	// literals with Quote.
	Filter string
	// Limit stops after that many entities (0: all).
	Limit int
}

// Quote makes an OData string literal: 'it”s'.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Each calls fn for every entity of the partition (all partitions when partitionKey is "")
// matching opts, page by page (continuation tokens are followed; memory stays flat). An error
// from fn stops the walk and is returned. Errors: table_not_found, invalid_entity_key.
func (s *Store) Each(ctx context.Context, partitionKey string, opts *QueryOptions, fn func(Entity) error) error {
	if opts == nil {
		opts = &QueryOptions{}
	}
	var conds []string
	if partitionKey != "" {
		if err := checkKey("PartitionKey", partitionKey); err != nil {
			return err
		}
		conds = append(conds, "PartitionKey eq "+Quote(partitionKey))
	}
	if p := opts.RowKeyPrefix; p != "" {
		conds = append(conds, "RowKey ge "+Quote(p))
		if end, ok := prefixEnd(p); ok {
			conds = append(conds, "RowKey lt "+Quote(end))
		}
	}
	if f := strings.TrimSpace(opts.Filter); f != "" {
		conds = append(conds, "("+f+")")
	}
	lo := &aztables.ListEntitiesOptions{}
	if len(conds) > 0 {
		lo.Filter = to.Ptr(strings.Join(conds, " and "))
	}
	if opts.Limit > 0 && opts.Limit < 1000 {
		lo.Top = to.Ptr(int32(opts.Limit))
	}
	seen := 0
	pager := s.client.NewListEntitiesPager(lo)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return translate(err, "query", s.name)
		}
		for _, raw := range page.Entities {
			e, err := parseEntity(raw, "")
			if err != nil {
				return err
			}
			if err := fn(e); err != nil {
				return err
			}
			seen++
			if opts.Limit > 0 && seen >= opts.Limit {
				return nil
			}
		}
	}
	return nil
}

// Query returns the entities Each would visit.
func (s *Store) Query(ctx context.Context, partitionKey string, opts *QueryOptions) ([]Entity, error) {
	var out []Entity
	err := s.Each(ctx, partitionKey, opts, func(e Entity) error { out = append(out, e); return nil })
	return out, err
}

// prefixEnd is the smallest string greater than every string with prefix p: p with its last
// character incremented (keys are compared as strings). ok is false when no bound is needed.
func prefixEnd(p string) (string, bool) {
	r := []rune(p)
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] < utf8.MaxRune {
			next := r[i] + 1
			if next >= 0xD800 && next <= 0xDFFF {
				next = 0xE000
			}
			return string(append(r[:i:i], next)), true
		}
	}
	return "", false
}
