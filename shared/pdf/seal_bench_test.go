package pdf

import (
	"context"
	"crypto/x509"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/pdf/internal/fixture"
	"github.com/esign-svc/esign/shared/pdf/stamp"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
)

// heapSampler records the peak of live heap objects while running.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(500 * time.Microsecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

func benchSeal(b *testing.B, in SealInput) {
	runtime.GC()
	base := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(base)
	h := startHeapSampler()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Seal(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	peak := h.Stop()
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peak-min(peak, base[0].Value.Uint64()))/(1<<20), "peak-heap-over-baseline-MB")
	b.ReportMetric(float64(len(in.Source))/(1<<20), "source-MB")
}

// BenchmarkSeal3Pages3Signers: three drawings plus date, text and checkbox stamped on a
// 3-page template, a 3-signer certificate, RSA-2048 PAdES (no TSA).
func BenchmarkSeal3Pages3Signers(b *testing.B) {
	src := fixture.PDF(b, 3, fixture.TemplateFields, 0)
	fields, err := stamp.ManifestFromPDF(src)
	if err != nil {
		b.Fatal(err)
	}
	key, cert := tsatest.NewCert(b, "seal", 2048)
	benchSeal(b, SealInput{
		Source: src, Placements: placementsFor(b, fields), Certificate: fixture.Certificate(3, goldenHead),
		Signer: key, Chain: []*x509.Certificate{cert},
	})
}

// BenchmarkSeal50Pages10MB10Signers: a 50-page source of about 10 MB without a manifest, so
// ten signature boxes go on appended signature pages, a 10-signer certificate, RSA-2048.
func BenchmarkSeal50Pages10MB10Signers(b *testing.B) {
	src := fixture.PDF(b, 50, nil, 14<<20)
	key, cert := tsatest.NewCert(b, "seal", 2048)
	sig := fixture.PNG(b, 600, 200)
	var boxes []stamp.SignatureBox
	for i := 0; i < 10; i++ {
		boxes = append(boxes, stamp.SignatureBox{Name: fixture.Names[i], Role: "signer", Image: sig})
	}
	benchSeal(b, SealInput{
		Source: src, SignaturePage: boxes, Certificate: fixture.Certificate(10, goldenHead),
		Signer: key, Chain: []*x509.Certificate{cert},
	})
}
