package web

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/apperr"
)

// fuzzBody has every shape a request body has: nested structs, slices of them, a pointer, a
// map, raw JSON, an interface, an embedded struct's promoted field and a field JSON ignores.
type fuzzBody struct {
	fuzzEmbedded
	Title   string          `json:"title"`
	Count   int32           `json:"count"`
	Ratio   float64         `json:"ratio"`
	Signers []fuzzSigner    `json:"signers"`
	Meta    map[string]int  `json:"meta"`
	Raw     json.RawMessage `json:"raw"`
	Opt     *fuzzSigner     `json:"opt"`
	Any     any             `json:"any"`
	Hidden  string          `json:"-"`
}

type fuzzEmbedded struct {
	Tag string `json:"tag"`
}

type fuzzSigner struct {
	Name       string `json:"name"`
	SlotIndex  uint8  `json:"slotIndex"`
	RequireOTP *bool  `json:"requireOtp"`
}

const fuzzLimit = 4096

// FuzzDecodeJSON: DecodeJSON takes a body exactly when encoding/json's strict decoding (no
// unknown field) takes it as one valid JSON object of valid UTF-8 under a JSON Content-Type;
// what it takes re-encodes to a body it takes again with the same value; what it refuses is
// one of its documented codes, a 4xx naming one field that exists in the body.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []struct{ ct, body string }{
		{"application/json", `{"title":"Offer","count":3,"ratio":1.5,"signers":[{"name":"Ada","slotIndex":1,"requireOtp":true}],` +
			`"meta":{"a":1},"raw":{"x":[1,2]},"opt":{"name":"B"},"any":[null,{"k":"v"}],"tag":"t"}`},
		{"", `{"TITLE":"case-insensitive","Signers":[{"NAME":"x"}]}`},
		{"application/problem+json; charset=utf-8", `{}`},
		{"text/plain", `{}`},
		{"", `{"signers":[{"name":"a"},{"requireOtp":1}]}`},
		{"", `{"signers":[{},{"slotIndex":256}]}`},
		{"", `{"signers":[{"nmae":"x"}]}`},
		{"", `{"opt":{"name":"x","extra":true}}`},
		{"", `{"meta":{"a":"x"}}`},
		{"", `{"Hidden":"x"}`},
		{"", `{"count":1e3}`},
		{"", `{"count":2147483648}`},
		{"", `{"title":"a\xffb"}`},
		{"", `{"a\xff":1}`},
		{"", "\xff{}"},
		{"", `{"title":"x"} {}`},
		{"", `{"title":"x"}}`}, // trailing data encoding/json's More does not see
		{"", `{"title":"x"} ]`},
		{"", `null`},
		{"", `[{"title":"x"}]`},
		{"", ``},
		{"", `{"any":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`},
		{"", `{"title":"` + strings.Repeat("a", fuzzLimit) + `"}`},
	} {
		f.Add(s.ct, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		r := httptest.NewRequest("POST", "/", bytes.NewReader(body))
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		var v fuzzBody
		err := DecodeJSON(r, fuzzLimit, &v)
		ctOK := jsonContentType(r) == nil
		want := ctOK && len(body) <= fuzzLimit && strictlyDecodes(body)
		if err == nil {
			if !want {
				t.Fatalf("took a body encoding/json refuses: %q", body)
			}
			again, merr := json.Marshal(v)
			if merr != nil {
				t.Fatalf("marshal what was taken: %v", merr)
			}
			var w fuzzBody
			if err := DecodeJSONBytes(again, &w); err != nil {
				t.Fatalf("refuses its own re-encoding %s: %v", again, err)
			}
			if back, _ := json.Marshal(w); !bytes.Equal(back, again) {
				t.Fatalf("round trip changed the value:\n%s\n%s", again, back)
			}
			return
		}
		if want {
			t.Fatalf("refused a body encoding/json takes: %q: %v", body, err)
		}
		e, ok := apperr.As(err)
		if !ok {
			t.Fatalf("not an apperr: %#v", err)
		}
		switch {
		case !ctOK:
			if e.Code != CodeUnsupportedMediaType || e.Kind != apperr.KindInvalid {
				t.Fatalf("Content-Type %q: %v", ct, err)
			}
			return
		case len(body) > fuzzLimit:
			if e.Code != CodeBodyTooLarge || e.Kind != apperr.KindTooLarge || e.Kind.Status() != 413 {
				t.Fatalf("%d bytes: %v", len(body), err)
			}
			return
		}
		if e.Kind != apperr.KindInvalid || len(e.Fields) != 1 || e.Fields[0].Field == "" || e.Fields[0].Message == "" {
			t.Fatalf("not a 400 naming one field: %#v", e)
		}
		field := e.Fields[0].Field
		switch e.Code {
		case CodeInvalidJSON:
			if field != BodyField {
				t.Fatalf("invalid_json names %q", field)
			}
		case CodeUnknownField, CodeInvalidRequest:
			// The field named is in the body's first value (a UTF-8 refusal names the string's
			// place, which a generic decoding, replacing the bad bytes, may not find again; a
			// body that breaks after the field at fault has no generic decoding).
			var doc any
			if field != BodyField && utf8.Valid(body) && json.NewDecoder(bytes.NewReader(body)).Decode(&doc) == nil {
				if !pathIn(doc, field) {
					t.Fatalf("%s names %q, not in %q", e.Code, field, body)
				}
			}
		default:
			t.Fatalf("undocumented code: %v", err)
		}
		// The same bytes through DecodeJSONBytes answer the same.
		var v2 fuzzBody
		e2, _ := apperr.As(DecodeJSONBytes(body, &v2))
		if e2 == nil || e2.Code != e.Code || e2.Fields[0].Field != field {
			t.Fatalf("DecodeJSONBytes answers %v, DecodeJSON %v", e2, e)
		}
	})
}

// strictlyDecodes is the reference: valid UTF-8, one valid JSON value that is an object, and
// encoding/json decodes it into fuzzBody with no unknown field.
func strictlyDecodes(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	if !utf8.Valid(body) || !json.Valid(body) || len(b) == 0 || b[0] != '{' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var v fuzzBody
	return dec.Decode(&v) == nil
}

// pathIn reports whether path (`signers[1].name`) names a value in doc, a generic decoding.
// Keys may hold "." or "[", so every key that fits the path's next part is tried.
func pathIn(doc any, path string) bool {
	if path == "" {
		return true
	}
	switch d := doc.(type) {
	case map[string]any:
		for k, v := range d {
			if rest, ok := strings.CutPrefix(path, k); ok && (rest == "" || rest[0] == '[' || rest[0] == '.') {
				if pathIn(v, strings.TrimPrefix(rest, ".")) {
					return true
				}
			}
		}
	case []any:
		if path[0] != '[' {
			return false
		}
		end := strings.IndexByte(path, ']')
		i, err := strconv.Atoi(path[1:max(end, 1)])
		if end < 0 || err != nil || i < 0 || i >= len(d) {
			return false
		}
		rest := path[end+1:]
		return pathIn(d[i], strings.TrimPrefix(rest, "."))
	}
	return false
}
