package server

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/web"
)

// Limits of the sign request: the callback's 2 MiB body (DESIGN 5) and a bounded answer.
const (
	maxSignBody   = 2 << 20
	maxAnswerBody = 64 << 10
)

// Error codes of the portal's own routes.
const (
	CodeCrossOrigin  = "cross_origin_refused"
	CodeInProgress   = "sign_in_progress"
	CodeUnavailable  = "service_unavailable"
	CodeInvalidField = "invalid_request"
)

// signRequest is what the signing page posts: the callback's body less what the portal adds
// (callbackId, the signer's address and user agent).
type signRequest struct {
	AccessToken  string            `json:"accessToken"`
	SessionID    string            `json:"sessionId"`
	SignerName   string            `json:"signerName"`
	SignaturePNG string            `json:"signaturePng"`
	Fields       []json.RawMessage `json:"fields"`
	Consents     []json.RawMessage `json:"consents"`
}

// callbackBody is the callback the service receives (docs/openapi.yaml CallbackRequest): the
// page's request with what the portal adds.
type callbackBody struct {
	CallbackID string `json:"callbackId"`
	signRequest
	IP        string `json:"ip"`
	UserAgent string `json:"userAgent"`
}

// sign is POST {base}/portal-api/sign: the page's signature, forwarded to the service as the
// callback, signed with the first secret, with a fresh callbackId and the signer's address and
// user agent as this server saw them. The service's answer (status and body) is passed back. A
// slot whose signature was accepted answers the same again rather than sending it twice; one
// being forwarded is 409 sign_in_progress. Errors: 403 cross_origin_refused for a request from
// another site; 400 naming the field at fault; 503 service_unavailable when the service cannot
// be reached.
func (s *Server) sign(w http.ResponseWriter, r *http.Request) error {
	if err := s.sameOrigin(r); err != nil {
		return err
	}
	var req signRequest
	if err := web.DecodeJSON(r, maxSignBody, &req); err != nil {
		return err
	}
	if err := req.check(); err != nil {
		return err
	}
	prev, done := s.attempts.begin(req.SessionID)
	if done {
		return answer(w, prev)
	}
	if prev != nil {
		return apperr.New(apperr.KindConflict, CodeInProgress, "this signature is being sent; wait for its answer")
	}
	res, err := s.forward(r, req)
	s.attempts.finish(req.SessionID, res)
	if err != nil {
		return err
	}
	return answer(w, res)
}

func (q signRequest) check() error {
	var bad []apperr.FieldError
	for _, f := range []struct{ path, v string }{{"accessToken", q.AccessToken}, {"sessionId", q.SessionID},
		{"signerName", q.SignerName}, {"signaturePng", q.SignaturePNG}} {
		if strings.TrimSpace(f.v) == "" {
			bad = append(bad, apperr.Field(f.path, "is required"))
		}
	}
	if len(bad) > 0 {
		return apperr.Invalid(CodeInvalidField, bad...)
	}
	return nil
}

// sameOrigin refuses a browser request from another site: the Origin header, when sent, must be
// the portal's; without one, Sec-Fetch-Site must say same-origin (or be absent: not a browser).
func (s *Server) sameOrigin(r *http.Request) error {
	o := r.Header.Get("Origin")
	site := r.Header.Get("Sec-Fetch-Site")
	if (o != "" && o != s.origin) || (o == "" && site != "" && site != "same-origin") {
		return apperr.New(apperr.KindForbidden, CodeCrossOrigin, "this route takes requests from the portal's own pages only")
	}
	return nil
}

// result is the service's answer to one forwarded callback.
type result struct {
	Status      int
	ContentType string
	Body        []byte
}

func answer(w http.ResponseWriter, res *result) error {
	w.Header().Set("Content-Type", res.ContentType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(res.Status)
	_, err := w.Write(res.Body)
	return err
}

// forward posts the callback. The body holds the access token and the signer's name: it is never
// logged, and an error carries no part of it.
func (s *Server) forward(r *http.Request, q signRequest) (*result, error) {
	q.Fields, q.Consents = nonNil(q.Fields), nonNil(q.Consents)
	body, err := json.Marshal(callbackBody{CallbackID: uuid.NewString(), signRequest: q,
		IP: web.ClientIPBehind(r, s.cfg.TrustedProxyHops), UserAgent: web.UserAgent(r)})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, s.api+"/esign/callback", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-functions-key", s.cfg.FunctionKey)
	req.Header.Set(callbacksig.Header, callbacksig.Sign(s.cfg.Secrets[0], s.cfg.Now(), body))
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		return nil, apperr.New(apperr.KindUnavailable, CodeUnavailable, "the signing service could not be reached; try again")
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBody))
	if err != nil {
		return nil, apperr.New(apperr.KindUnavailable, CodeUnavailable, "the signing service's answer was cut off; try again")
	}
	return &result{Status: resp.StatusCode, ContentType: cmp.Or(resp.Header.Get("Content-Type"), "application/json"), Body: raw}, nil
}

func nonNil(v []json.RawMessage) []json.RawMessage {
	if v == nil {
		return []json.RawMessage{}
	}
	return v
}
