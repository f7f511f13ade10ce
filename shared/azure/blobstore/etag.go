package blobstore

import (
	"context"
	"strings"
)

// ETag is the blob's current ETag, from one properties request (what a cache keyed by ETag asks
// before reading a blob again). Errors: blob_not_found.
func (s *Store) ETag(ctx context.Context, container, name string) (string, error) {
	p, err := s.Properties(ctx, container, name)
	return p.ETag, err
}

// ETags maps the name of every blob whose name starts with prefix to its ETag, from one listing
// (paged). The listing gives ETags without the quotes of the ETag header; they are quoted here,
// so that they equal what ETag, Put and Properties answer. Errors: blob_not_found when the
// container is missing.
func (s *Store) ETags(ctx context.Context, container, prefix string) (map[string]string, error) {
	out := map[string]string{}
	err := s.Walk(ctx, container, prefix, func(it Item) error {
		e := it.ETag
		if e != "" && !strings.HasPrefix(e, `"`) && !strings.HasPrefix(e, `W/"`) {
			e = `"` + e + `"`
		}
		out[it.Name] = e
		return nil
	})
	return out, err
}
