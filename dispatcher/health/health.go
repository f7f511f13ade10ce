// Package health answers GET /api/health: the engine version and whether blob, table and queue
// storage are reachable, and the licensing service when LICENSING_URL names one (DESIGN 19). It is anonymous and says nothing secret: no account names, no errors'
// text beyond a short reason.
package health

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"time"

	"github.com/esign-svc/esign/shared/logging"
	"github.com/esign-svc/esign/shared/web"
)

// Prober checks each storage service and returns one result per service name.
type Prober interface {
	Ping(ctx context.Context) map[string]error
}

// Handler serves the health report.
type Handler struct {
	Prober  Prober
	Version string
	// Licensing is the operator's licensing service (LICENSING_URL); nil: none is configured
	// and the report has no licensing member.
	Licensing interface {
		Health(ctx context.Context) error
	}
	Timeout time.Duration // per probe round; 5 s when zero
}

// Service is one storage service's reachability.
type Service struct {
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
}

// Report is the response body.
type Report struct {
	Status        string             `json:"status"` // ok | degraded
	EngineVersion string             `json:"engineVersion"`
	Storage       map[string]Service `json:"storage"`
	Licensing     *Service           `json:"licensing,omitempty"` // only when LICENSING_URL is set
	CheckedAt     time.Time          `json:"checkedAt"`
}

// ServeHTTP answers the report: 200 when every service is reachable, 503 otherwise; 400
// body_not_allowed for a request with a body (web.NoBody).
func (h Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := web.NoBody(r); err != nil {
		web.Fail(w, r, err)
		return
	}
	timeout := h.Timeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	results := h.Prober.Ping(ctx)
	rep := Report{Status: "ok", EngineVersion: h.Version, Storage: map[string]Service{}, CheckedAt: time.Now().UTC()}
	names := make([]string, 0, len(results))
	for name := range results {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := results[name]; err != nil {
			rep.Status = "degraded"
			rep.Storage[name] = Service{Reachable: false, Error: "unreachable"}
			logging.From(r.Context()).Warn().Str("service", name).Err(err).Msg("health probe failed")
			continue
		}
		rep.Storage[name] = Service{Reachable: true}
	}
	if h.Licensing != nil {
		rep.Licensing = &Service{Reachable: true}
		if err := h.Licensing.Health(ctx); err != nil {
			rep.Status = "degraded"
			rep.Licensing = &Service{Reachable: false, Error: "unreachable"}
			logging.From(r.Context()).Warn().Str("service", "licensing").Err(err).Msg("health probe failed")
		}
	}
	status := http.StatusOK
	if rep.Status != "ok" {
		status = http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(rep)
}
