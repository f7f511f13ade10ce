// Package licensingstub is the local stand-in for the operator's licensing service (DESIGN 19)
// that `make run` starts (devtools/cmd/devlicensing) and the end-to-end tests run in-process. It
// checks what the apps send as the real service would and keeps it:
//
//   - every call must carry the deployment's licence as "Authorization: Bearer <compact JWS>",
//     verified against the operator's public key (EdDSA only, current): else 401;
//   - POST /v1/validate takes exactly {tenantId, feature, correlationId} (all non-empty, feature
//     one of the licence features, no other member, application/json): else 400 naming the
//     field; it answers {allowed: true}, or {allowed: false, reason} for a tenant (or a tenant's
//     feature) the rules refuse;
//   - POST /v1/usage takes exactly {id, tenantId, kind, at} (licensing.Usage.Validate) and is
//     idempotent by id: a second post of an id is answered 200 and not kept twice;
//   - GET /v1/health answers 200 {status: "ok"};
//   - FailUsage makes a tenant's next usage posts answer 503 (a test of the retries);
//   - GET /_stub/received answers what was kept: {validate: [...], usage: [...],
//     usagePosts: n, postsById: {id: n}} (no bearer needed: it is the test's and the
//     developer's view).
//
// Answers to bad requests are application/problem+json.
package licensingstub

import (
	"crypto/ed25519"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/web"
)

// ReceivedPath is the stub's own endpoint listing what it was sent.
const ReceivedPath = "/_stub/received"

// Codes of the stub's 4xx answers (beyond web's body codes).
const (
	CodeUnauthorized = "licence_bearer_invalid"
	CodeInvalid      = "invalid_request"
)

// Received is what the stub kept.
type Received struct {
	Validate   []licensing.ValidateRequest `json:"validate"`
	Usage      []licensing.Usage           `json:"usage"` // one per id, in the order first posted
	UsagePosts int                         `json:"usagePosts"`
	PostsByID  map[string]int              `json:"postsById"` // how often each id was posted
}

// Stub is the licensing stand-in. Safe for concurrent use.
type Stub struct {
	mu      sync.Mutex
	key     ed25519.PublicKey
	refused map[string]string // "tenant" or "tenant/feature" -> reason
	failing map[string]int    // tenant -> how many more usage posts answer 503
	got     Received
}

// New makes a stub that verifies bearers with key (nil: every call is 401 until SetKey) and
// refuses what rules name: "<tenantId>" or "<tenantId>/<feature>" mapped to the reason.
func New(key ed25519.PublicKey, rules map[string]string) *Stub {
	s := &Stub{key: key, refused: map[string]string{}, failing: map[string]int{}}
	for k, v := range rules {
		s.refused[k] = v
	}
	return s
}

// SetKey sets the operator's public key the bearers are verified with.
func (s *Stub) SetKey(key ed25519.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// Refuse adds a rule: tenant (or "tenant/feature") is refused with reason.
func (s *Stub) Refuse(rule, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused[rule] = reason
}

// FailUsage makes the next n usage posts of tenant answer 503 (the service down for it), so a
// test sees the queue retry them.
func (s *Stub) FailUsage(tenant string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing[tenant] = n
}

// Received is a copy of what the stub kept.
func (s *Stub) Received() Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	posts := make(map[string]int, len(s.got.PostsByID))
	for k, v := range s.got.PostsByID {
		posts[k] = v
	}
	return Received{Validate: append([]licensing.ValidateRequest{}, s.got.Validate...), Usage: append([]licensing.Usage{}, s.got.Usage...),
		UsagePosts: s.got.UsagePosts, PostsByID: posts}
}

// ServeHTTP serves the endpoints.
func (s *Stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var err error
	switch {
	case r.Method == http.MethodGet && r.URL.Path == ReceivedPath:
		err = web.JSON(w, http.StatusOK, s.Received())
	case r.Method == http.MethodGet && r.URL.Path == licensing.PathHealth:
		if err = s.authorise(r); err == nil {
			err = web.JSON(w, http.StatusOK, map[string]string{"status": "ok"})
		}
	case r.Method == http.MethodPost && r.URL.Path == licensing.PathValidate:
		err = s.validate(w, r)
	case r.Method == http.MethodPost && r.URL.Path == licensing.PathUsage:
		err = s.usage(w, r)
	default:
		err = apperr.New(apperr.KindNotFound, "not_found", "no such endpoint")
	}
	if err != nil {
		apperr.WriteProblem(w, "", err)
	}
}

// authorise checks the bearer: a licence signed by the operator's key and current.
func (s *Stub) authorise(r *http.Request) error {
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || key == nil {
		return apperr.New(apperr.KindUnauthenticated, CodeUnauthorized, "a bearer licence is required")
	}
	l, err := licence.Parse(tok, key)
	if err == nil {
		err = l.Require()
	}
	if err != nil {
		return apperr.New(apperr.KindUnauthenticated, CodeUnauthorized, "the bearer is not a current licence of this operator")
	}
	return nil
}

func (s *Stub) validate(w http.ResponseWriter, r *http.Request) error {
	if err := s.authorise(r); err != nil {
		return err
	}
	var req licensing.ValidateRequest
	if err := web.DecodeJSON(r, 4<<10, &req); err != nil {
		return err
	}
	var fields []apperr.FieldError
	for _, f := range []struct{ name, v string }{{"tenantId", req.TenantID}, {"feature", req.Feature}, {"correlationId", req.CorrelationID}} {
		if strings.TrimSpace(f.v) == "" {
			fields = append(fields, apperr.Field(f.name, "is required"))
		}
	}
	if req.Feature != "" && !slices.Contains(licence.AllFeatures, licence.Feature(req.Feature)) {
		fields = append(fields, apperr.Field("feature", "must be esign, dispatch, delivery or workflow"))
	}
	if len(fields) > 0 {
		return apperr.Invalid(CodeInvalid, fields...)
	}
	s.mu.Lock()
	s.got.Validate = append(s.got.Validate, req)
	reason, refused := s.refused[req.TenantID+"/"+req.Feature]
	if !refused {
		reason, refused = s.refused[req.TenantID]
	}
	s.mu.Unlock()
	if refused {
		return web.JSON(w, http.StatusOK, map[string]any{"allowed": false, "reason": reason})
	}
	return web.JSON(w, http.StatusOK, map[string]any{"allowed": true})
}

func (s *Stub) usage(w http.ResponseWriter, r *http.Request) error {
	if err := s.authorise(r); err != nil {
		return err
	}
	var u licensing.Usage
	if err := web.DecodeJSON(r, 4<<10, &u); err != nil {
		return err
	}
	if err := u.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing[u.TenantID] > 0 {
		s.failing[u.TenantID]--
		return apperr.New(apperr.KindUnavailable, "unavailable", "the licensing service is down for this tenant (FailUsage)")
	}
	s.got.UsagePosts++
	if s.got.PostsByID == nil {
		s.got.PostsByID = map[string]int{}
	}
	s.got.PostsByID[u.ID]++
	if slices.ContainsFunc(s.got.Usage, func(k licensing.Usage) bool { return k.ID == u.ID }) {
		w.WriteHeader(http.StatusOK) // idempotent: already recorded
		return nil
	}
	s.got.Usage = append(s.got.Usage, u)
	w.WriteHeader(http.StatusCreated)
	return nil
}
