package health

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
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
