package licensing

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/licence"
)

const jws = "eyJhbGciOiJFZERTQSJ9.eyJmZWF0dXJlcyI6WyJlc2lnbiJdfQ.c2ln"

// seen is one request the test server received.
type seen struct {
	Method, Path, Auth, ContentType string
	Body                            map[string]any
}

// server answers every request with answer and keeps what it received.
func server(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, func() []seen) {
	t.Helper()
	var mu sync.Mutex
	var got []seen
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), body})
		mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(s.Close)
	return s, func() []seen { mu.Lock(); defer mu.Unlock(); return append([]seen(nil), got...) }
}

func client(t *testing.T, url string, opts ...Option) *Client {
	t.Helper()
	c, err := New(url, jws, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Validate posts {tenantId, feature, correlationId} with the licence as bearer; allowed is nil,
// refused is 403 licence_refused carrying the reason and the feature.
func TestValidateRequestAndAnswers(t *testing.T) {
	t.Parallel()
	s, got := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"allowed":true}`)
	})
	c := client(t, s.URL+"/")
	if err := c.Validate(context.Background(), "tid-1", licence.FeatureEsign, "corr-1"); err != nil {
		t.Fatal(err)
	}
	g := got()
	if len(g) != 1 || g[0].Method != "POST" || g[0].Path != PathValidate || g[0].Auth != "Bearer "+jws ||
		g[0].ContentType != "application/json" || len(g[0].Body) != 3 ||
		g[0].Body["tenantId"] != "tid-1" || g[0].Body["feature"] != "esign" || g[0].Body["correlationId"] != "corr-1" {
		t.Fatalf("request %+v", g)
	}

	refuse, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"allowed":false,"reason":"tenant suspended\u0007 by the operator"}`)
	})
	err := client(t, refuse.URL).Validate(context.Background(), "tid-2", licence.FeatureWorkflow, "c")
	var e *apperr.Error
	if !asErr(err, &e) || e.Kind != apperr.KindForbidden || e.Code != CodeRefused ||
		e.Extra["reason"] != "tenant suspended by the operator" || e.Extra["feature"] != "workflow" ||
		!strings.Contains(e.Detail, "tenant suspended by the operator") {
		t.Fatalf("refusal: %#v", err)
	}
	var nilClient *Client
	if err := nilClient.Validate(context.Background(), "t", licence.FeatureEsign, "c"); err != nil {
		t.Fatalf("offline only: %v", err)
	}
}

func asErr(err error, e **apperr.Error) bool {
	x, ok := apperr.As(err)
	*e = x
	return ok
}

func isCode(err error, code string) bool {
	e, ok := apperr.As(err)
	return ok && e.Kind == apperr.KindInvalid && e.Code == code
}

// An unreachable service (5xx, an answer that is not {allowed}, a time-out, a closed port)
// falls back to the offline licence: Validate allows, and the fall-back is logged once a minute
// of the injected clock.
func TestValidateFallsBackAndLogsOnceAMinute(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	down, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	})
	garbage, _ := server(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"reason":"x"}`) })
	slow, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var logs []string
	opts := []Option{WithTimeout(50 * time.Millisecond), WithClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now }),
		WithLog(func(f string, a ...any) { mu.Lock(); logs = append(logs, fmt.Sprintf(f, a...)); mu.Unlock() })}
	for _, url := range []string{down.URL, garbage.URL, slow.URL, closed.URL} {
		c := client(t, url, opts...)
		for range 3 {
			if err := c.Validate(context.Background(), "t", licence.FeatureDelivery, "c"); err != nil {
				t.Fatalf("%s: %v", url, err)
			}
		}
		mu.Lock()
		n := len(logs)
		now = now.Add(LogEvery - time.Second)
		mu.Unlock()
		if n != 1 {
			t.Fatalf("%s: %d log lines after 3 calls in a minute, want 1: %q", url, n, logs)
		}
		_ = c.Validate(context.Background(), "t", licence.FeatureDelivery, "c") // 59 s later: still quiet
		mu.Lock()
		now = now.Add(time.Second)
		mu.Unlock()
		_ = c.Validate(context.Background(), "t", licence.FeatureDelivery, "c") // a minute on: logged again
		mu.Lock()
		if len(logs) != 2 || strings.Contains(strings.Join(logs, ""), jws) {
			t.Fatalf("%s: logs %q", url, logs)
		}
		logs = nil
		mu.Unlock()
	}
}

// Record posts the usage record with the bearer; 5xx and time-outs are retryable
// (KindUnavailable), a 4xx permanent, an invalid record is never sent.
func TestRecordUsage(t *testing.T) {
	t.Parallel()
	status := http.StatusNoContent
	var mu sync.Mutex
	s, got := server(t, func(w http.ResponseWriter, r *http.Request) { mu.Lock(); defer mu.Unlock(); w.WriteHeader(status) })
	c := client(t, s.URL, WithTimeout(time.Second))
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.FixedZone("x", 3600))
	u := NewUsage(KindSessionSealed, "tid", at, "g1")
	if u.ID != "session.sealed:g1" || !u.At.Equal(at) || u.At.Location() != time.UTC {
		t.Fatalf("usage %+v", u)
	}
	if err := c.Record(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	g := got()
	if len(g) != 1 || g[0].Path != PathUsage || g[0].Auth != "Bearer "+jws || g[0].Body["id"] != "session.sealed:g1" ||
		g[0].Body["tenantId"] != "tid" || g[0].Body["kind"] != "session.sealed" || g[0].Body["at"] != "2026-02-03T03:05:06Z" {
		t.Fatalf("request %+v", g)
	}
	for st, kind := range map[int]apperr.Kind{500: apperr.KindUnavailable, 503: apperr.KindUnavailable, 429: apperr.KindUnavailable,
		400: apperr.KindInvalid, 401: apperr.KindInvalid} {
		mu.Lock()
		status = st
		mu.Unlock()
		if err := c.Record(context.Background(), u); apperr.KindOf(err) != kind {
			t.Errorf("%d: %v", st, err)
		}
	}
	n := len(got())
	for _, bad := range []Usage{{}, {ID: "x", TenantID: "t", Kind: "session.opened", At: at}, {ID: "x", TenantID: " ", Kind: KindBatchRecord, At: at}} {
		if err := c.Record(context.Background(), bad); !isCode(err, CodeInvalidUsage) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if len(got()) != n {
		t.Fatal("an invalid record was sent")
	}
}

// Health is nil on 2xx, an error otherwise; a nil client has nothing to report.
func TestHealth(t *testing.T) {
	t.Parallel()
	ok, got := server(t, func(w http.ResponseWriter, r *http.Request) {})
	if err := client(t, ok.URL).Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := got(); len(g) != 1 || g[0].Method != "GET" || g[0].Path != PathHealth || g[0].Auth != "Bearer "+jws {
		t.Fatalf("%+v", g)
	}
	bad, _ := server(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	if err := client(t, bad.URL).Health(context.Background()); err == nil {
		t.Fatal("503 reported healthy")
	}
}

// New refuses a URL that is not https (http only on loopback) and an empty licence.
func TestNewChecksSettings(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "ftp://x", "http://example.com", "https://u:p@example.com", "https://example.com?x=1"} {
		if _, err := New(u, jws); err == nil || !strings.Contains(err.Error(), Setting) {
			t.Errorf("%q: %v", u, err)
		}
	}
	if _, err := New("https://licensing.example.com", " "); err == nil {
		t.Error("empty licence accepted")
	}
	if _, err := New("https://licensing.example.com/", jws); err != nil {
		t.Error(err)
	}
}

// BenchmarkValidate is what a create pays for the licensing service on loopback: one POST
// /v1/validate round trip on a kept-alive connection, allowed.
func BenchmarkValidate(b *testing.B) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"allowed":true}`)
	}))
	defer s.Close()
	c, err := New(s.URL, jws)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Validate(ctx, "tid", licence.FeatureEsign, "corr"); err != nil {
			b.Fatal(err)
		}
	}
}

// A usage message is one record (the shape before issue 26) or a group of records with no
// other member; a group's faults name the record by its JSON path.
func TestUsageMessageValidate(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	one := NewUsage(KindBatchRecord, "t", at, "b", "0")
	if err := (UsageMessage{Usage: one}).Validate(); err != nil {
		t.Fatalf("one record: %v", err)
	}
	if got := GroupMessage([]Usage{one}); got.Records != nil || got.Usage != one {
		t.Fatalf("one record as a group: %+v", got)
	}
	two := GroupMessage([]Usage{one, NewUsage(KindBatchRecord, "t", at, "b", "1")})
	if err := two.Validate(); err != nil || len(two.All()) != 2 || two.All()[1].ID != "batch.record:b:1" {
		t.Fatalf("group: %v %+v", err, two.All())
	}
	for _, c := range []struct {
		m     UsageMessage
		field string
	}{
		{UsageMessage{Records: []Usage{}}, "records"},
		{UsageMessage{Usage: one, Records: []Usage{one}}, "records"},
		{UsageMessage{Records: []Usage{one, {ID: "x", TenantID: "t", At: at}}}, "records[1].kind"},
		{UsageMessage{Records: make([]Usage, MaxGroup+1)}, "records"},
	} {
		e, ok := apperr.As(c.m.Validate())
		if !ok || e.Code != CodeInvalidUsage || len(e.Fields) == 0 || !slices.ContainsFunc(e.Fields, func(f apperr.FieldError) bool { return f.Field == c.field }) {
			t.Errorf("%+v: %v, want %s", c.m, c.m.Validate(), c.field)
		}
	}
}
