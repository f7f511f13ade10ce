// Package web holds the HTTP edge helpers every dispatcher handler uses: handlers return errors,
// and Handle writes them as problem+json (logging internal ones once, there); DecodeJSON reads a
// size-limited, strict JSON body of valid UTF-8 and turns every decoding failure into a 4xx
// naming the field.
package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

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

// MaxJSONBody is the default limit of a JSON request body (DESIGN section 5).
const MaxJSONBody = 1 << 20

// Problem codes of reading a request body.
const (
	CodeBodyUnreadable       = "body_unreadable"         // 400: the body could not be read
	CodeBodyTooLarge         = "body_too_large"          // 413: over the route's limit
	CodeUnsupportedMediaType = "unsupported_media_type"  // 400: a Content-Type that is not JSON
	CodeInvalidJSON          = "invalid_json"            // 400 (field "body"): empty or not JSON
	CodeInvalidRequest       = apperr.CodeInvalidRequest // 400: a field at fault, named
	CodeUnknownField         = "unknown_field"           // 400: a field the request does not have
)

// DecodeJSON reads r's body (at most limit bytes) into v, refusing unknown fields and trailing
// data. Errors: 413 body_too_large; 400 unsupported_media_type when the Content-Type is set and
// not JSON; 400 invalid_json (field "body"), unknown_field or invalid_request naming the field.
func DecodeJSON(r *http.Request, limit int64, v any) error {
	if err := jsonContentType(r); err != nil {
		return err
	}
	body, err := ReadBody(r, limit)
	if err != nil {
		return err
	}
	return DecodeJSONBytes(body, v)
}

// DecodeOptionalJSON is DecodeJSON for a route whose body may be left out: an empty body
// leaves v as it is and is no error; any other body follows DecodeJSON's rules (a JSON
// Content-Type when one is set, at most limit bytes, one JSON object with no unknown field).
func DecodeOptionalJSON(r *http.Request, limit int64, v any) error {
	body, err := ReadBody(r, limit)
	if err != nil || len(body) == 0 {
		return err
	}
	if err := jsonContentType(r); err != nil {
		return err
	}
	return DecodeJSONBytes(body, v)
}

// ReadBody reads r's body, at most limit bytes. Errors: 400 body_unreadable; 413 body_too_large.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, apperr.Wrap(err, apperr.KindInvalid, CodeBodyUnreadable, "the request body could not be read")
	}
	if int64(len(body)) > limit {
		return nil, apperr.New(apperr.KindTooLarge, CodeBodyTooLarge, "the request body is larger than %d bytes", limit)
	}
	return body, nil
}

// jsonContentType refuses a Content-Type that is set and not JSON (415).
func jsonContentType(r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.Contains(strings.ToLower(ct), "json") {
		return apperr.New(apperr.KindInvalid, CodeUnsupportedMediaType, "the body must be application/json")
	}
	return nil
}

// DecodeJSONBytes is DecodeJSON over bytes already read (the callback keeps them for its HMAC).
// A body that is not valid UTF-8 is refused first (400 naming the string that holds the first
// invalid byte), before the decoder could replace it with U+FFFD.
func DecodeJSONBytes(body []byte, v any) error {
	if err := checkUTF8(body); err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data after the JSON value")
	}
	if err == nil {
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return apperr.Invalid(CodeInvalidJSON, apperr.Field("body", "the body is empty; a JSON object is required"))
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "body"
		}
		return apperr.Invalid(CodeInvalidRequest, apperr.Field(field, "must be "+jsonKind(typ.Type.Kind().String())))
	case errors.As(err, &syn):
		return apperr.Invalid(CodeInvalidJSON, apperr.Field("body", fmt.Sprintf("not valid JSON (at byte %d)", syn.Offset)))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return apperr.Invalid(CodeUnknownField, apperr.Field(name, "is not a field of this request"))
	default:
		return apperr.Invalid(CodeInvalidJSON, apperr.Field("body", "not valid JSON"))
	}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "int", "int64", "int32", "float64", "uint", "uint64":
		return "a number"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	}
	return "of another type"
}

// JSON writes v with status.
func JSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}
