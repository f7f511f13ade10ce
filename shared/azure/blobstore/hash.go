package blobstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
)

// HashSHA256 streams the blob through SHA-256 and returns the lower-case hex digest and the
// number of bytes read. Memory use is constant. Errors: blob_not_found; a read error mid-stream
// is internal.
func (s *Store) HashSHA256(ctx context.Context, container, name string) (string, int64, error) {
	body, _, err := s.Open(ctx, container, name)
	if err != nil {
		return "", 0, err
	}
	defer body.Close()
	h := sha256.New()
	n, err := io.Copy(h, body)
	if err != nil {
		return "", 0, fmt.Errorf("blobstore: hash %s/%s: %w", container, name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
