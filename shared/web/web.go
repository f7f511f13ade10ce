// Package web holds the HTTP edge helpers every dispatcher handler uses: handlers return errors,
// and Handle writes them as problem+json (logging internal ones once, there); body.go reads a
// request body one way per kind of route (DecodeJSON, DecodeOptionalJSON, NoBody,
// DecodeJSONBody for a route that reads its raw bytes first, StreamBody for a streamed document)
// and turns every failure into a 4xx naming the field.
package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/logging"
)

// HandlerFunc is an HTTP handler that returns its failure instead of writing it.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Handle adapts h: a returned error is answered as problem+json; an internal one is logged with
// its cause (never with request data) and answered with a generic detail.
func Handle(h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				logging.From(r.Context()).Error().Str("panic", fmt.Sprint(v)).Msg("handler panicked")
				apperr.WriteProblem(w, logging.CorrelationID(r.Context()), errors.New("panic"))
			}
		}()
		if err := h(w, r); err != nil {
			Fail(w, r, err)
		}
	})
}

// Fail writes err as a problem and logs it when it is internal.
func Fail(w http.ResponseWriter, r *http.Request, err error) {
	if internal := apperr.WriteProblem(w, logging.CorrelationID(r.Context()), err); internal {
		logging.From(r.Context()).Error().Err(err).Str("route", r.Pattern).Msg("request failed")
	}
}

// JSON writes v with status.
func JSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}
