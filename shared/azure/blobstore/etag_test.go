package blobstore

import (
	"bytes"
	"context"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

func TestETagAndETags(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newStore(t)
	put := func(name, body string) string {
		t.Helper()
		etag, err := s.Put(ctx, c, name, bytes.NewReader([]byte(body)), "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		return etag
	}
	a := put("pkg/a.yaml", "a")
	b := put("pkg/b.pdf", "b")
	put("pkgs/other", "o")
	if got, err := s.ETag(ctx, c, "pkg/a.yaml"); err != nil || got != a {
		t.Errorf("ETag = %q, %v; want %q", got, err, a)
	}
	tags, err := s.ETags(ctx, c, "pkg/")
	if err != nil || len(tags) != 2 || tags["pkg/a.yaml"] != a || tags["pkg/b.pdf"] != b {
		t.Errorf("ETags = %v, %v", tags, err)
	}
	a2 := put("pkg/a.yaml", "changed")
	if got, _ := s.ETag(ctx, c, "pkg/a.yaml"); got != a2 || a2 == a {
		t.Errorf("after a change: %q (was %q, put said %q)", got, a, a2)
	}
	_, err = s.ETag(ctx, c, "pkg/missing")
	wantErr(t, err, apperr.KindNotFound, CodeBlobNotFound)
	_, err = s.ETags(ctx, "no-such-"+c, "pkg/")
	wantErr(t, err, apperr.KindNotFound, CodeBlobNotFound)
}
