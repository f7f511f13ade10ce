package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
)

// Every route reads its request body in exactly one of these ways:
//
//   - DecodeJSON: a JSON object is required;
//   - DecodeOptionalJSON: a JSON object, or nothing at all;
//   - NoBody: nothing at all (or the empty object `{}`);
//   - ReadBody then DecodeJSONBody: a route that needs the raw bytes first (the signed callback
//     computes its HMAC over them) and then applies DecodeJSON's rules;
//   - StreamBody: a route whose body is one document of a given media type (the PDF upload),
//     streamed by the route under the same size rule.
//
// The rules, the same on every route: a body over the route's limit is 413 body_too_large; a
// body on a route that takes none is 400 body_not_allowed (but the empty JSON object `{}`,
// taken as no body); a JSON body whose Content-Type is set and is not JSON is 400
// unsupported_media_type; a JSON body must be one object (null, an array, a string, a number
// or a boolean is 400 invalid_request naming the whole body), with no field the request does
// not have and nothing after it.

// MaxJSONBody is the default limit of a JSON request body (DESIGN section 5), and the limit
// past which a body sent to a route that takes none is 413 rather than 400.
const MaxJSONBody = 1 << 20

// BodyField is the field path problems give the whole request body.
const BodyField = "body"

// Problem codes of reading a request body.
const (
	CodeBodyUnreadable       = "body_unreadable"         // 400: the body could not be read
	CodeBodyTooLarge         = "body_too_large"          // 413: over the route's limit
	CodeBodyNotAllowed       = "body_not_allowed"        // 400 (field "body"): the route takes no body
	CodeUnsupportedMediaType = "unsupported_media_type"  // 400: a Content-Type that is not JSON
	CodeInvalidJSON          = "invalid_json"            // 400 (field "body"): empty or not JSON
	CodeInvalidRequest       = apperr.CodeInvalidRequest // 400: a field at fault, named ("body": not an object)
	CodeUnknownField         = "unknown_field"           // 400: a field the request does not have
)

// DecodeJSON reads r's body (at most limit bytes) into v, one JSON object with no unknown field
// and no trailing data. Errors: 400 unsupported_media_type when the Content-Type is set and not
// JSON; 413 body_too_large; 400 body_unreadable; 400 invalid_json (field "body"),
// invalid_request (field "body" for a value that is not an object, else the field at fault) or
// unknown_field naming the field by its full path (`signers[0].requireOtp`).
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
// leaves v as it is and is no error, whatever its Content-Type; any other body follows
// DecodeJSON's rules and errors.
func DecodeOptionalJSON(r *http.Request, limit int64, v any) error {
	body, err := ReadBody(r, limit)
	if err != nil || len(body) == 0 {
		return err
	}
	return DecodeJSONBody(r, body, v)
}

// NoBody is the rule of a route that takes no body (the spec shows its body as "-"): no body,
// an empty one (whatever its Content-Type), or an empty JSON object `{}` with no Content-Type
// or a JSON one (blanks around and inside it allowed: many HTTP clients send `{}` on every
// POST) passes. Errors: 400 body_not_allowed (field "body") for any other body (an object
// with a member, null, an array, text, `{}` sent as text/plain); 413 body_too_large past
// MaxJSONBody; 400 body_unreadable.
func NoBody(r *http.Request) error {
	body, err := ReadBody(r, MaxJSONBody)
	if err != nil || len(body) == 0 {
		return err
	}
	if !emptyObject(body) || jsonContentType(r) != nil {
		return apperr.Invalid(CodeBodyNotAllowed, apperr.Field(BodyField, "this route takes no request body; send none (or {})"))
	}
	return nil
}

// emptyObject reports whether body is the JSON object `{}`, with JSON blanks around and
// between its braces.
func emptyObject(body []byte) bool {
	b := bytes.Trim(body, " \t\r\n")
	return len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}' && len(bytes.Trim(b[1:len(b)-1], " \t\r\n")) == 0
}

// DecodeJSONBody applies DecodeJSON's Content-Type and object rules to a body its route read
// itself with ReadBody (the callback verifies its HMAC over the raw bytes first). Errors as
// DecodeJSON's, but for the size and reading ones.
func DecodeJSONBody(r *http.Request, body []byte, v any) error {
	if err := jsonContentType(r); err != nil {
		return err
	}
	return DecodeJSONBytes(body, v)
}

// ReadBody reads r's body, at most limit bytes. A route reads its body through this only when
// it needs the raw bytes (see DecodeJSONBody). Errors: 400 body_unreadable; 413 body_too_large.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, tooLarge(limit) // declared: nothing need be read to know
	}
	if t, ok := r.Body.(BytesBody); ok {
		if body := t.TakeBytes(); int64(len(body)) <= limit {
			return body, nil
		}
		return nil, tooLarge(limit)
	}
	body, err := ReadAll(io.LimitReader(r.Body, limit+1), r.ContentLength)
	if err != nil {
		return nil, unreadable(err)
	}
	if int64(len(body)) > limit {
		return nil, tooLarge(limit)
	}
	return body, nil
}

// BytesBody is a request body already held whole in memory (a Functions invocation's, rebuilt
// from its payload) that hands its bytes over instead of being read into a copy: ReadBody takes
// them, and the body is then empty.
type BytesBody interface {
	io.ReadCloser
	TakeBytes() []byte
}

// ReadAll is io.ReadAll into one buffer of the expected length (a request's declared length, a
// ZIP entry's size; the caller bounds it: ReadBody reads only a declared length within the
// route's limit): a body of that length is read with no buffer growing by doubling and no copy
// (a 23 MiB batch body read by io.ReadAll passed through buffers of about twice its size). A
// longer one grows the buffer as append does; an unknown length (expected <= 0) is io.ReadAll's.
func ReadAll(r io.Reader, expected int64) ([]byte, error) {
	if expected <= 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, expected+1) // one byte more: the read that finds the end needs room
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// StreamBody is the rule of a route whose body is one document of mediaType, too large to read
// whole before looking at it (the PDF upload): it returns the body unread, for the route to
// stream. The reader yields at most limit bytes; reading past them fails with 413
// body_too_large, and a failed read is 400 body_unreadable. Errors: 400 unsupported_media_type
// when the Content-Type is set and is not mediaType (any parameters allowed); 413
// body_too_large when the declared length is over limit (nothing is read).
func StreamBody(r *http.Request, mediaType string, limit int64) (io.Reader, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != mediaType {
			return nil, apperr.New(apperr.KindInvalid, CodeUnsupportedMediaType, "the body must be %s", mediaType)
		}
	}
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	return &limitedBody{r: r.Body, left: limit, limit: limit}, nil
}

// limitedBody reads at most limit bytes of a request body: one byte more is 413, and a read
// failure is 400 body_unreadable.
type limitedBody struct {
	r           io.Reader
	left, limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte past the limit tells a body of exactly limit bytes from a longer one.
		var one [1]byte
		if n, err := io.ReadFull(b.r, one[:]); n > 0 {
			return 0, tooLarge(b.limit)
		} else if err != io.EOF && err != io.ErrUnexpectedEOF {
			return 0, unreadable(err)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if err != nil && err != io.EOF {
		err = unreadable(err)
	}
	return n, err
}

func unreadable(err error) error {
	return apperr.Wrap(err, apperr.KindInvalid, CodeBodyUnreadable, "the request body could not be read")
}

func tooLarge(limit int64) error {
	return apperr.New(apperr.KindTooLarge, CodeBodyTooLarge, "the request body is larger than %d bytes", limit)
}

// jsonContentType refuses a Content-Type that is set and is not JSON: application/json or a
// +json type, with any parameters.
func jsonContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || !(strings.HasSuffix(mt, "/json") || strings.HasSuffix(mt, "+json")) {
		return apperr.New(apperr.KindInvalid, CodeUnsupportedMediaType, "the body must be application/json")
	}
	return nil
}

// DecodeJSONBytes decodes one JSON object from body into v (DecodeJSON without the request:
// the same errors but for the size, reading and Content-Type ones).
func DecodeJSONBytes(body []byte, v any) error {
	// Invalid UTF-8 is refused first (400 naming the string that holds the first invalid byte),
	// before the decoder could replace it with U+FFFD.
	if err := checkUTF8(body); err != nil {
		return err
	}
	if err := jsonObject(body); err != nil {
		return err
	}
	if len(body) >= aliasMin && decodeAliased(body, v) {
		return nil
	}
	return decodeStrict(body, v)
}

// decodeStrict is DecodeJSONBytes' decoding of body, once checked as UTF-8, and its errors.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	// Anything but blanks after the object is trailing data. dec.More alone would miss a
	// closing "}" or "]": `{"a":1}}` was taken (found by FuzzDecodeJSON).
	if err == nil && len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) > 0 {
		err = errors.New("trailing data after the JSON value")
	}
	if err == nil {
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return apperr.Invalid(CodeInvalidJSON, apperr.Field(BodyField, "the body is empty; a JSON object is required"))
	case errors.As(err, &typ):
		field := typ.Field
		if p, ok := typeErrorPath(body, v); ok {
			field = p // with the array indices the decoder's name leaves out
		}
		if field == "" {
			field = BodyField
		}
		return apperr.Invalid(CodeInvalidRequest, apperr.Field(field, "must be "+jsonKind(typ.Type.Kind().String())))
	case errors.As(err, &syn):
		return apperr.Invalid(CodeInvalidJSON, apperr.Field(BodyField, fmt.Sprintf("not valid JSON (at byte %d)", syn.Offset)))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, ok := unknownFieldPath(body, v)
		if !ok {
			name = strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		}
		if name == "" {
			name = BodyField // an empty key of the top-level object
		}
		return apperr.Invalid(CodeUnknownField, apperr.Field(name, "is not a field of this request"))
	default:
		return apperr.Invalid(CodeInvalidJSON, apperr.Field(BodyField, "not valid JSON"))
	}
}

// jsonObject refuses a body that is one valid JSON value other than an object (null decodes
// into a struct as nothing at all, so the decoder alone would let it pass). An empty body and
// one that is not JSON are left to the decoder, which names them.
func jsonObject(body []byte) error {
	b := bytes.TrimLeft(body, " \t\r\n")
	if len(b) == 0 || b[0] == '{' || !json.Valid(b) {
		return nil
	}
	return apperr.Invalid(CodeInvalidRequest, apperr.Field(BodyField, "must be a JSON object"))
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
