package render

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/template"
)

// BenchmarkRenderRecord renders one record of the 3-page sample package (examples/offer): the
// CPU part of Render — the template loader's cache hit, the settings' merge, the record's
// validation (fields and CEL rules), the fill, the hashes and the manifest — with storage
// replaced by the in-memory benchmark fakes below (the behaviour is tested against Azurite).
// peak-heap-bytes is the highest heap (runtime/metrics heap objects, live and not yet collected)
// sampled while the renders run; base-heap-bytes the heap before them, after a collection (the
// loaded package, the font, the test binary's own).
func BenchmarkRenderRecord(b *testing.B) {
	files := samplePackage(b)
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	for name, data := range files {
		w, err := zw.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			b.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	r := &Renderer{Templates: &template.Loader{Blobs: benchTemplateBlobs{zip: zipped.Bytes()}},
		Blobs: benchDiscardBlobs{}, Store: benchNoDocuments{}, Now: time.Now}
	record := offerJSON(b)
	by := Caller{TenantID: "t1", CallerID: "oid-1", Actor: kernel.Actor{Kind: "initiator", ID: "oid-1"},
		Licence: licencetest.New(b)}
	render := func(i int) {
		req := Request{TemplatePath: "templates/bench/offer.zip", DataSource: record,
			Options: Options{CorrelationID: "bench-" + strconv.Itoa(i)}}
		res, err := r.Render(context.Background(), by, req)
		if err != nil || !res.Created || res.Document.Pages != 3 {
			b.Fatalf("render: %+v (%v)", res.Document, err)
		}
	}
	render(-1) // the loader's first read and parse is not what is measured
	runtime.GC()
	base := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(base)
	stop := samplePeakHeap()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		render(i)
	}
	b.StopTimer()
	b.ReportMetric(float64(stop()), "peak-heap-bytes")
	b.ReportMetric(float64(base[0].Value.Uint64()), "base-heap-bytes")
}

// samplePeakHeap samples the heap's live objects every half millisecond until stop, which
// returns the highest value seen.
func samplePeakHeap() (stop func() uint64) {
	var (
		max  uint64 // the sampler's; stop reads it once the sampler has ended
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > max {
			max = v
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(500 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		read()
		return max
	}
}

// benchTemplateBlobs is the benchmark's in-memory templates container: one ZIP package whose
// ETag never changes, so every load after the first is the loader's cache hit.
type benchTemplateBlobs struct{ zip []byte }

func (m benchTemplateBlobs) ReadAll(context.Context, string, string, int64) ([]byte, map[string]string, error) {
	return m.zip, nil, nil
}

func (benchTemplateBlobs) ETag(context.Context, string, string) (string, error) {
	return `"bench"`, nil
}

func (benchTemplateBlobs) ETags(context.Context, string, string) (map[string]string, error) {
	return nil, apperr.New(apperr.KindNotFound, "not_found", "the benchmark has no folder packages")
}

// benchDiscardBlobs is the benchmark's documents container: every write is new and its bytes
// are read and dropped.
type benchDiscardBlobs struct{}

func (benchDiscardBlobs) PutIfAbsent(_ context.Context, _, _ string, r io.Reader, _ string, _ map[string]string) (string, error) {
	_, err := io.Copy(io.Discard, r)
	return `"etag"`, err
}

func (benchDiscardBlobs) Metadata(context.Context, string, string) (map[string]string, error) {
	return nil, apperr.New(apperr.KindNotFound, "not_found", "the benchmark keeps no blobs")
}

func (benchDiscardBlobs) EnsureContainer(context.Context, string) error { return nil }

// benchNoDocuments is the benchmark's document table: nothing is ever stored before, and a
// create is dropped.
type benchNoDocuments struct{}

func (benchNoDocuments) Create(context.Context, *document.Document, kernel.Change) error { return nil }

func (benchNoDocuments) Load(context.Context, string, string) (*document.Document, error) {
	return nil, apperr.New(apperr.KindNotFound, "document_not_found", "the benchmark keeps no documents")
}

func (benchNoDocuments) Update(context.Context, string, document.Step) (*document.Document, kernel.Change, error) {
	return nil, kernel.Change{}, apperr.New(apperr.KindNotFound, "document_not_found", "the benchmark keeps no documents")
}
