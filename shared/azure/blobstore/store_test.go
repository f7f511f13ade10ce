package blobstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

// newStore gives a store and a fresh container.
func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	s := New(azuritetest.Account(t))
	c := azuritetest.Name("t-")
	if err := s.EnsureContainer(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return s, c
}

func wantErr(t *testing.T, err error, kind apperr.Kind, code string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != kind || e.Code != code {
		t.Fatalf("err = %v, want kind %d code %s", err, kind, code)
	}
}

func TestEnsureContainer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newStore(t)
	if err := s.EnsureContainer(ctx, c); err != nil {
		t.Errorf("second EnsureContainer: %v", err)
	}
	wantErr(t, s.EnsureContainer(ctx, "Bad_Name"), apperr.KindInvalid, CodeInvalidBlobPath)
}

func TestPutOpenRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newStore(t)
	// 9 MiB + 3 bytes: more than two blocks, so the staged path of UploadStream is exercised.
	data := bytes.Repeat([]byte("0123456789abcdef"), (9<<20)/16)
	data = append(data, 'x', 'y', 'z')
	etag, err := s.Put(ctx, c, "dir/doc.pdf", bytes.NewReader(data), "application/pdf", map[string]string{"Kind": "rendered", "group_id": "g1"})
	if err != nil {
		t.Fatal(err)
	}
	body, props, err := s.Open(ctx, c, "dir/doc.pdf")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(body)
	body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("content differs: got %d bytes, want %d", len(got), len(data))
	}
	if props.Size != int64(len(data)) || props.ContentType != "application/pdf" || props.ETag != etag || props.LastModified.IsZero() {
		t.Errorf("props = %+v, etag %s", props, etag)
	}
	if props.Metadata["kind"] != "rendered" || props.Metadata["group_id"] != "g1" {
		t.Errorf("metadata = %v", props.Metadata)
	}
	p2, err := s.Properties(ctx, c, "dir/doc.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if p2.ETag != etag || p2.Size != props.Size || p2.Metadata["kind"] != "rendered" {
		t.Errorf("Properties = %+v, Open props = %+v", p2, props)
	}
	sum, n, err := s.HashSHA256(ctx, c, "dir/doc.pdf")
	want := sha256.Sum256(data)
	if err != nil || sum != hex.EncodeToString(want[:]) || n != int64(len(data)) {
		t.Errorf("HashSHA256 = %s, %d, %v", sum, n, err)
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newStore(t)
	missing := azuritetest.Name("missing-")
	tests := []struct {
		name string
		call func() error
	}{
		{"open missing blob", func() error { _, _, err := s.Open(ctx, c, "nope"); return err }},
		{"open missing container", func() error { _, _, err := s.Open(ctx, missing, "nope"); return err }},
		{"properties missing blob", func() error { _, err := s.Properties(ctx, c, "nope"); return err }},
		{"properties missing container", func() error { _, err := s.Properties(ctx, missing, "nope"); return err }},
		{"delete missing blob", func() error { return s.Delete(ctx, c, "nope") }},
		{"delete missing container", func() error { return s.Delete(ctx, missing, "nope") }},
		{"hash missing blob", func() error { _, _, err := s.HashSHA256(ctx, c, "nope"); return err }},
		{"list missing container", func() error { _, err := s.List(ctx, missing, ""); return err }},
		{"put into missing container", func() error {
			_, err := s.Put(ctx, missing, "a", strings.NewReader("x"), "", nil)
			return err
		}},
		{"read URL of missing blob", func() error { _, _, err := s.ReadURL(ctx, c, "nope", time.Minute); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantErr(t, tc.call(), apperr.KindNotFound, CodeBlobNotFound)
		})
	}
}

func TestPutIfAbsent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newStore(t)
	etag, err := s.PutIfAbsent(ctx, c, "once", strings.NewReader("first"), "text/plain", nil)
	if err != nil || etag == "" {
		t.Fatalf("first PutIfAbsent: %q, %v", etag, err)
	}
	_, err = s.PutIfAbsent(ctx, c, "once", strings.NewReader("second"), "text/plain", nil)
	wantErr(t, err, apperr.KindConflict, CodeBlobExists)
	if got := read(t, s, c, "once"); got != "first" {
		t.Errorf("content after refused PutIfAbsent = %q, want first", got)
	}
}

func TestPutIfMatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newStore(t)
	e1, err := s.Put(ctx, c, "m", strings.NewReader("v1"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	e2, err := s.PutIfMatch(ctx, c, "m", e1, strings.NewReader("v2"), "", nil)
	if err != nil || e2 == e1 {
		t.Fatalf("PutIfMatch with the current ETag: %q, %v", e2, err)
	}
	_, err = s.PutIfMatch(ctx, c, "m", e1, strings.NewReader("v3"), "", nil)
	wantErr(t, err, apperr.KindPrecondition, CodePrecondition)
	if !errors.Is(err, apperr.ErrPrecondition) {
		t.Error("errors.Is(err, apperr.ErrPrecondition) = false")
	}
	if got := read(t, s, c, "m"); got != "v2" {
		t.Errorf("content = %q, want v2", got)
	}
	_, err = s.PutIfMatch(ctx, c, "gone", e1, strings.NewReader("v"), "", nil)
	if k := apperr.KindOf(err); k != apperr.KindPrecondition && k != apperr.KindNotFound {
		t.Errorf("PutIfMatch on a missing blob: %v, want precondition or not found", err)
	}
	if _, err := s.PutIfMatch(ctx, c, "m", "", strings.NewReader("v"), "", nil); err == nil {
		t.Error("PutIfMatch without an ETag succeeded")
	}
}

func TestInvalidMetadata(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	for _, md := range []map[string]string{{"1abc": "x"}, {"a-b": "x"}, {"": "x"}, {"ok": "caf\u00e9"}, {"ok": "a\nb"}} {
		_, err := s.Put(context.Background(), c, "m", strings.NewReader("x"), "", md)
		wantErr(t, err, apperr.KindInvalid, "invalid_blob_metadata")
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newStore(t)
	if _, err := s.Put(ctx, c, "d", strings.NewReader("x"), "", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, c, "d"); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.Open(ctx, c, "d")
	wantErr(t, err, apperr.KindNotFound, CodeBlobNotFound)
	wantErr(t, s.Delete(ctx, c, "d"), apperr.KindNotFound, CodeBlobNotFound)
	if err := s.DeleteIfExists(ctx, c, "d"); err != nil {
		t.Errorf("DeleteIfExists on a missing blob: %v", err)
	}
	if err := s.DeleteIfExists(ctx, azuritetest.Name("missing-"), "d"); err != nil {
		t.Errorf("DeleteIfExists in a missing container: %v", err)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newStore(t)
	for _, n := range []string{"g1/b.pdf", "g1/a.pdf", "g10/c.pdf", "g2/d.pdf"} {
		if _, err := s.Put(ctx, c, n, strings.NewReader(n), "application/pdf", nil); err != nil {
			t.Fatal(err)
		}
	}
	items, err := s.List(ctx, c, "g1/")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].Name != "g1/a.pdf" || items[1].Name != "g1/b.pdf" {
		t.Fatalf("List(g1/) = %+v", items)
	}
	if items[0].Size != int64(len("g1/a.pdf")) || items[0].ContentType != "application/pdf" || items[0].ETag == "" || items[0].LastModified.IsZero() {
		t.Errorf("item = %+v", items[0])
	}
	all, err := s.List(ctx, c, "")
	if err != nil || len(all) != 4 {
		t.Errorf("List() = %d items, %v", len(all), err)
	}
	stop := errors.New("stop")
	seen := 0
	err = s.Walk(ctx, c, "", func(Item) error { seen++; return stop })
	if !errors.Is(err, stop) || seen != 1 {
		t.Errorf("Walk with a failing fn: err %v after %d items", err, seen)
	}
}

// A download URL answers the blob as an attachment under the given name.
func TestDownloadURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newStore(t)
	if _, err := s.Put(ctx, c, "copy.pdf", strings.NewReader("pdf bytes"), "application/pdf", nil); err != nil {
		t.Fatal(err)
	}
	u, _, err := s.DownloadURL(ctx, c, "copy.pdf", time.Minute, `Statement "2026"/ä.pdf`)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `attachment; filename="Statement _2026___.pdf"; filename*=UTF-8''Statement%20%222026%22%2F%C3%A4.pdf`
	if resp.StatusCode != 200 || string(b) != "pdf bytes" || resp.Header.Get("Content-Disposition") != want {
		t.Fatalf("GET download URL: %d %q, Content-Disposition %q, want %q", resp.StatusCode, b, resp.Header.Get("Content-Disposition"), want)
	}
	if _, _, err := s.DownloadURL(ctx, c, "missing.pdf", time.Minute, "x.pdf"); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("a missing blob: %v, want not found", err)
	}
}

func TestReadURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newStore(t)
	if _, err := s.Put(ctx, c, "sub dir/out.pdf", strings.NewReader("signed bytes"), "application/pdf", nil); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	u, exp, err := s.ReadURL(ctx, c, "sub dir/out.pdf", 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Before(before.Add(10*time.Minute-2*time.Second)) || exp.After(time.Now().Add(10*time.Minute)) {
		t.Errorf("expiry %s not about 10 minutes ahead", exp)
	}
	if !strings.Contains(u, "sp=r&") || !strings.Contains(u, "sig=") {
		t.Errorf("URL %s is not a read SAS", u)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "signed bytes" {
		t.Fatalf("GET SAS URL: %d %q", resp.StatusCode, b)
	}
	// Read-only: a write with the same signature is refused.
	req, _ := http.NewRequest(http.MethodPut, u, strings.NewReader("tampered"))
	req.Header.Set("x-ms-blob-type", "BlockBlob")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("PUT with a read SAS: %d, want 403", resp.StatusCode)
	}
	if got := read(t, s, c, "sub dir/out.pdf"); got != "signed bytes" {
		t.Errorf("blob changed to %q", got)
	}
	// A tampered signature scope (another blob) is refused.
	other := strings.Replace(u, "out.pdf", "other.pdf", 1)
	if _, err := s.Put(ctx, c, "sub dir/other.pdf", strings.NewReader("secret"), "", nil); err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(other)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("SAS reused for another blob: %d, want 403", resp.StatusCode)
	}
	for _, ttl := range []time.Duration{0, -time.Second, MaxReadURLTTL + time.Second} {
		if _, _, err := s.ReadURL(ctx, c, "sub dir/out.pdf", ttl); err == nil {
			t.Errorf("ReadURL ttl %s accepted", ttl)
		}
	}
}

func read(t *testing.T, s *Store, c, name string) string {
	t.Helper()
	body, _, err := s.Open(context.Background(), c, name)
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOpenRangeIsPinnedToTheETag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newStore(t)
	data := []byte("0123456789abcdefghij")
	etag, err := s.Put(ctx, c, "r.pdf", bytes.NewReader(data), "application/pdf", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := s.OpenRange(ctx, c, "r.pdf", 5, 7, etag)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(body)
	body.Close()
	if string(got) != "56789ab" {
		t.Fatalf("range read %q", got)
	}
	if _, err := s.Put(ctx, c, "r.pdf", bytes.NewReader([]byte("replaced")), "application/pdf", nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.OpenRange(ctx, c, "r.pdf", 0, 4, etag)
	wantErr(t, err, apperr.KindPrecondition, CodePrecondition)
	_, err = s.OpenRange(ctx, c, "missing.pdf", 0, 4, "")
	wantErr(t, err, apperr.KindNotFound, CodeBlobNotFound)
}

func TestReadAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newStore(t)
	data := []byte("%PDF-1.7 tiny")
	if _, err := s.Put(ctx, c, "a.pdf", bytes.NewReader(data), "application/pdf", map[string]string{"EsignManifest": "a.pdf.manifest.json"}); err != nil {
		t.Fatal(err)
	}
	got, md, err := s.ReadAll(ctx, c, "a.pdf", int64(len(data)))
	if err != nil || !bytes.Equal(got, data) || md["esignmanifest"] != "a.pdf.manifest.json" {
		t.Fatalf("ReadAll = %q %v %v", got, md, err)
	}
	_, _, err = s.ReadAll(ctx, c, "a.pdf", int64(len(data))-1)
	wantErr(t, err, apperr.KindTooLarge, "document_too_large")
	_, _, err = s.ReadAll(ctx, c, "missing.pdf", 10)
	wantErr(t, err, apperr.KindNotFound, CodeBlobNotFound)
}

func TestCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newStore(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), (uploadBlockSize+1000)/16) // more than one block
	if _, err := s.Put(ctx, c, "src/a.pdf", bytes.NewReader(big), "application/pdf", nil); err != nil {
		t.Fatal(err)
	}
	// Into a container that does not exist yet: it is created, the bytes and type are the source's.
	dst := Path{Container: azuritetest.Name("cp-"), Name: "copy.pdf"}
	if err := s.Copy(ctx, Path{Container: c, Name: "src/a.pdf"}, dst); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.ReadAll(ctx, dst.Container, dst.Name, int64(len(big))+1)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("copy holds %d bytes (%v), want the source's %d", len(got), err, len(big))
	}
	if p, err := s.Properties(ctx, dst.Container, dst.Name); err != nil || p.ContentType != "application/pdf" {
		t.Fatalf("copy properties %+v, %v", p, err)
	}
	// Again over the copy: replaced; the source is untouched.
	if _, err := s.Put(ctx, c, "src/a.pdf", strings.NewReader("v2"), "text/plain", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Copy(ctx, Path{Container: c, Name: "src/a.pdf"}, dst); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, dst.Container, dst.Name); got != "v2" {
		t.Fatalf("second copy %q", got)
	}
	if got := read(t, s, c, "src/a.pdf"); got != "v2" {
		t.Fatalf("source %q", got)
	}
	wantErr(t, s.Copy(ctx, Path{Container: c, Name: "missing.pdf"}, dst), apperr.KindNotFound, CodeBlobNotFound)
}
