// Package health answers GET /api/health: the engine version, whether blob, table and queue
// storage are reachable, the licensing service when LICENSING_URL names one (DESIGN 19), and the
// features an app of the service found off at its start for a setting it lacks (the processor
// without WEBHOOK_SECRETS sends no workflow callback). It is anonymous and says nothing secret:
// no account names, no errors' text beyond a short reason, settings named but never their values.
package health

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"time"

	"github.com/esign-svc/esign/shared/appstatus"
	"github.com/esign-svc/esign/shared/logging"
	"github.com/esign-svc/esign/shared/web"
)

// Prober checks each storage service and returns one result per service name.
type Prober interface {
	Ping(ctx context.Context) map[string]error
}

// Notices lists the features an app found off at its last start (*appstatus.Store).
type Notices interface {
	Off(ctx context.Context) ([]appstatus.Notice, error)
}

// Handler serves the health report.
type Handler struct {
	Prober  Prober
	Notices Notices // nil: no feature is reported
	Version string
	// Licensing is the operator's licensing service (LICENSING_URL); nil: none is configured
	// and the report has no licensing member.
	Licensing interface {
		Health(ctx context.Context) error
	}
	Timeout time.Duration // per probe round; 5 s when zero
}

// Feature is a part of the service that is off, and why.
type Feature struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason"`
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
	// Features holds the features that are off, by name (workflowCallbacks); absent when none.
	Features  map[string]Feature `json:"features,omitempty"`
	CheckedAt time.Time          `json:"checkedAt"`
}

// ServeHTTP answers the report: 200 when every storage service is reachable (status ok, or
// degraded when a feature is off or the licensing service does not answer: the service answers
// on its offline licence, a load balancer must not take it out), 503 otherwise; 400 body_not_allowed for a request with a body other than {} (web.NoBody).
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
	status := http.StatusOK
	if rep.Status != "ok" {
		status = http.StatusServiceUnavailable
	}
	if h.Licensing != nil {
		rep.Licensing = &Service{Reachable: true}
		if err := h.Licensing.Health(ctx); err != nil {
			rep.Status = "degraded"
			rep.Licensing = &Service{Reachable: false, Error: "unreachable"}
			logging.From(r.Context()).Warn().Str("service", "licensing").Err(err).Msg("health probe failed")
		}
	}
	if h.Notices != nil {
		off, err := h.Notices.Off(ctx)
		if err != nil {
			logging.From(r.Context()).Warn().Err(err).Msg("health: the apps' start notices could not be read")
		}
		for _, n := range off {
			if rep.Features == nil {
				rep.Features = map[string]Feature{}
			}
			rep.Features[n.Feature] = Feature{Reason: n.Reason}
			rep.Status = "degraded"
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(rep)
}
