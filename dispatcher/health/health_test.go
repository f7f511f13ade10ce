package health

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/appstatus"
)

type fakeProber map[string]error

func (f fakeProber) Ping(context.Context) map[string]error { return f }

func TestHealthReportsEachServiceAndHidesErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		probe  fakeProber
		status int
		state  string
	}{
		{"all up", fakeProber{"blob": nil, "table": nil, "queue": nil}, 200, "ok"},
		{"table down", fakeProber{"blob": nil, "table": errors.New("dial tcp 10.0.0.1: secret-account"), "queue": nil}, 503, "degraded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Handler{Prober: tc.probe, Version: "1.2.3"}.ServeHTTP(rec, httptest.NewRequest("GET", "/api/health", nil))
			var rep Report
			if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			if rec.Code != tc.status || rep.Status != tc.state || rep.EngineVersion != "1.2.3" || len(rep.Storage) != 3 {
				t.Fatalf("%d %+v", rec.Code, rep)
			}
			if strings.Contains(rec.Body.String(), "secret-account") {
				t.Fatal("the probe's error text reached the anonymous answer")
			}
		})
	}
}

type fakeNotices []appstatus.Notice

func (f fakeNotices) Off(context.Context) ([]appstatus.Notice, error) { return f, nil }

// TestHealthSaysWhichFeatureIsOff: a feature the processor found off at its start (no
// WEBHOOK_SECRETS: no workflow callback is sent) makes the report degraded, naming the feature
// and the reason, with 200 while storage answers (the service still serves); with storage down
// too it is 503. Before issue 22 /api/health said ok.
func TestHealthSaysWhichFeatureIsOff(t *testing.T) {
	t.Parallel()
	off := fakeNotices{{App: appstatus.AppProcessor, Feature: appstatus.FeatureWorkflowCallbacks, Reason: "WEBHOOK_SECRETS is not set"}}
	up := fakeProber{"blob": nil, "table": nil, "queue": nil}
	down := fakeProber{"blob": nil, "table": errors.New("down"), "queue": nil}
	for _, tc := range []struct {
		name    string
		probe   fakeProber
		notices Notices
		status  int
		state   string
	}{
		{"nothing off", up, fakeNotices{}, 200, "ok"},
		{"callbacks off", up, off, 200, "degraded"},
		{"callbacks off, storage down", down, off, 503, "degraded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Handler{Prober: tc.probe, Notices: tc.notices, Version: "1"}.ServeHTTP(rec, httptest.NewRequest("GET", "/api/health", nil))
			var rep Report
			if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			if rec.Code != tc.status || rep.Status != tc.state {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			f, ok := rep.Features[appstatus.FeatureWorkflowCallbacks]
			if want := len(tc.notices.(fakeNotices)) > 0; ok != want || (want && (f.Available || f.Reason != off[0].Reason)) {
				t.Fatalf("features %+v (%s)", rep.Features, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), `"features"`) && ok {
				t.Fatal("features not in the body")
			}
		})
	}
}

type fakeLicensing struct{ err error }

func (f fakeLicensing) Health(context.Context) error { return f.err }

// With LICENSING_URL set the report has a licensing member: reachable when GET /v1/health
// answers, degraded when it does not (200: creates fall back to the offline licence); without it there is no member at all.
func TestHealthReportsTheLicensingService(t *testing.T) {
	t.Parallel()
	up := fakeProber{"blob": nil, "table": nil, "queue": nil}
	for _, tc := range []struct {
		name      string
		licensing interface{ Health(context.Context) error }
		status    int
		state     string
		member    string
	}{
		{"none", nil, 200, "ok", ""},
		{"up", fakeLicensing{}, 200, "ok", `"licensing":{"reachable":true}`},
		{"down", fakeLicensing{errors.New("dial tcp licensing.internal: refused")}, 200, "degraded", `"licensing":{"reachable":false,"error":"unreachable"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Handler{Prober: up, Version: "1", Licensing: tc.licensing}.ServeHTTP(rec, httptest.NewRequest("GET", "/api/health", nil))
			var rep Report
			if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			body := rec.Body.String()
			if rec.Code != tc.status || rep.Status != tc.state || strings.Contains(body, "licensing.internal") {
				t.Fatalf("%d %s", rec.Code, body)
			}
			if (tc.member == "") != !strings.Contains(body, `"licensing"`) || (tc.member != "" && !strings.Contains(body, tc.member)) {
				t.Fatalf("licensing member: %s", body)
			}
		})
	}
}
