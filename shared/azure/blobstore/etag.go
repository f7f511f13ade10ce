package blobstore

import "context"

// ETag is the blob's current ETag, from one properties request (what a cache keyed by ETag asks
// before reading a blob again). Errors: blob_not_found.
func (s *Store) ETag(ctx context.Context, container, name string) (string, error) {
	p, err := s.Properties(ctx, container, name)
	return p.ETag, err
}

// ETags maps the name of every blob whose name starts with prefix to its ETag, from one listing
// (paged). Errors: blob_not_found when the container is missing.
func (s *Store) ETags(ctx context.Context, container, prefix string) (map[string]string, error) {
	out := map[string]string{}
	err := s.Walk(ctx, container, prefix, func(it Item) error { out[it.Name] = it.ETag; return nil })
	return out, err
}
