package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

type sample struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	Inner struct {
		Flag bool `json:"flag"`
	} `json:"inner"`
}

func TestDecodeJSONErrorsNameTheField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, ct, code, field string
		kind                        apperr.Kind
	}{
		{"empty", ``, "", "invalid_json", "body", apperr.KindInvalid},
		{"syntax", `{"name":`, "", "invalid_json", "body", apperr.KindInvalid},
		{"unknown", `{"nmae":"x"}`, "", "unknown_field", "nmae", apperr.KindInvalid},
		{"type", `{"count":"x"}`, "", "invalid_request", "count", apperr.KindInvalid},
		{"nested type", `{"inner":{"flag":3}}`, "", "invalid_request", "inner.flag", apperr.KindInvalid},
		{"trailing", `{"name":"x"} {}`, "", "invalid_json", "body", apperr.KindInvalid},
		{"trailing closing brace", `{"name":"x"}}`, "", "invalid_json", "body", apperr.KindInvalid},
		{"trailing closing bracket", "{\"name\":\"x\"}\n]", "", "invalid_json", "body", apperr.KindInvalid},
		{"array", `[1]`, "", "invalid_request", "body", apperr.KindInvalid},
		{"too large", `{"name":"` + strings.Repeat("a", 200) + `"}`, "", "body_too_large", "", apperr.KindTooLarge},
		{"wrong type", `{}`, "text/plain", "unsupported_media_type", "", apperr.KindInvalid},
		{"json only as a parameter", `{}`, "text/plain; note=json", "unsupported_media_type", "", apperr.KindInvalid},
		{"unparsable type", `{}`, "application/json; =", "unsupported_media_type", "", apperr.KindInvalid},
		{"null", `null`, "", "invalid_request", "body", apperr.KindInvalid},
		{"null after blanks", " \n null", "application/json", "invalid_request", "body", apperr.KindInvalid},
		{"empty array", `[]`, "", "invalid_request", "body", apperr.KindInvalid},
		{"string", `"x"`, "", "invalid_request", "body", apperr.KindInvalid},
		{"number", `42`, "", "invalid_request", "body", apperr.KindInvalid},
		{"boolean", `true`, "", "invalid_request", "body", apperr.KindInvalid},
		{"not JSON", `nul`, "", "invalid_json", "body", apperr.KindInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("POST", "/", strings.NewReader(tc.body))
			if tc.ct != "" {
				r.Header.Set("Content-Type", tc.ct)
			}
			var v sample
			err := DecodeJSON(r, 100, &v)
			e, ok := apperr.As(err)
			if !ok || e.Code != tc.code || e.Kind != tc.kind {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			if tc.field != "" && (len(e.Fields) != 1 || e.Fields[0].Field != tc.field) {
				t.Fatalf("fields %+v, want %s", e.Fields, tc.field)
			}
		})
	}
}

func TestDecodeOptionalJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, ct, code, field string
		kind                        apperr.Kind
		want                        string // v.Name after a successful decode
	}{
		{"empty", ``, "", "", "", 0, "kept"},
		{"empty with another type", ``, "text/plain", "", "", 0, "kept"},
		{"object", `{"name":"x"}`, "application/json; charset=utf-8", "", "", 0, "x"},
		{"empty object", `{}`, "", "", "", 0, "kept"},
		{"syntax", `{"name":`, "", "invalid_json", "body", apperr.KindInvalid, ""},
		{"blank", ` `, "", "invalid_json", "body", apperr.KindInvalid, ""},
		{"unknown", `{"nmae":"x"}`, "", "unknown_field", "nmae", apperr.KindInvalid, ""},
		{"type", `{"count":"x"}`, "", "invalid_request", "count", apperr.KindInvalid, ""},
		{"array", `[1]`, "", "invalid_request", "body", apperr.KindInvalid, ""},
		{"trailing", `{} {}`, "", "invalid_json", "body", apperr.KindInvalid, ""},
		{"too large", `{"name":"` + strings.Repeat("a", 200) + `"}`, "", "body_too_large", "", apperr.KindTooLarge, ""},
		{"wrong type", `{}`, "text/plain", "unsupported_media_type", "", apperr.KindInvalid, ""},
		{"problem+json", `{"name":"p"}`, "application/problem+json", "", "", 0, "p"},
		{"null", `null`, "application/json", "invalid_request", "body", apperr.KindInvalid, ""},
		{"string", `"x"`, "", "invalid_request", "body", apperr.KindInvalid, ""},
		{"number", `42`, "", "invalid_request", "body", apperr.KindInvalid, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("POST", "/", strings.NewReader(tc.body))
			if tc.ct != "" {
				r.Header.Set("Content-Type", tc.ct)
			}
			v := sample{Name: "kept"}
			err := DecodeOptionalJSON(r, 100, &v)
			if tc.code == "" {
				if err != nil || v.Name != tc.want {
					t.Fatalf("err %v, name %q, want %q", err, v.Name, tc.want)
				}
				return
			}
			e, ok := apperr.As(err)
			if !ok || e.Code != tc.code || e.Kind != tc.kind {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			if tc.field != "" && (len(e.Fields) != 1 || e.Fields[0].Field != tc.field) {
				t.Fatalf("fields %+v, want %s", e.Fields, tc.field)
			}
		})
	}
}

func TestNoBody(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, ct, code string
		kind                 apperr.Kind
	}{
		{"empty", ``, "", "", 0},
		{"empty with a type", ``, "text/plain", "", 0},
		// The empty object is no body (many HTTP clients send `{}` on every POST); it was 400
		// body_not_allowed before issue 22.
		{"empty object", `{}`, "application/json", "", 0},
		{"empty object, no type", `{}`, "", "", 0},
		{"empty object, +json type", `{}`, "application/merge-patch+json; charset=utf-8", "", 0},
		{"empty object with blanks", " \r\n{ \t\n}\n", "application/json", "", 0},
		{"empty object as text", `{}`, "text/plain", "body_not_allowed", apperr.KindInvalid},
		{"empty object, bad type", `{}`, "application/json; =", "body_not_allowed", apperr.KindInvalid},
		{"object with a member", `{"reason":"x"}`, "application/json", "body_not_allowed", apperr.KindInvalid},
		{"object with an empty member", `{"":null}`, "application/json", "body_not_allowed", apperr.KindInvalid},
		{"two objects", `{}{}`, "application/json", "body_not_allowed", apperr.KindInvalid},
		{"unclosed", `{`, "application/json", "body_not_allowed", apperr.KindInvalid},
		{"braces reversed", `}{`, "application/json", "body_not_allowed", apperr.KindInvalid},
		{"empty array", `[]`, "application/json", "body_not_allowed", apperr.KindInvalid},
		{"one blank", ` `, "", "body_not_allowed", apperr.KindInvalid},
		{"null", `null`, "application/json", "body_not_allowed", apperr.KindInvalid},
		{"text", `hello`, "text/plain", "body_not_allowed", apperr.KindInvalid},
		{"at the limit", strings.Repeat("a", MaxJSONBody), "text/plain", "body_not_allowed", apperr.KindInvalid},
		{"past the limit", strings.Repeat("a", MaxJSONBody+1), "text/plain", "body_too_large", apperr.KindTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, declared := range []bool{true, false} { // Content-Length sent, or chunked
				var rd io.Reader = strings.NewReader(tc.body)
				if !declared {
					rd = io.MultiReader(rd) // hides the length from NewRequest
				}
				r := httptest.NewRequest("POST", "/", rd)
				if tc.ct != "" {
					r.Header.Set("Content-Type", tc.ct)
				}
				err := NoBody(r)
				if tc.code == "" {
					if err != nil {
						t.Fatalf("declared %v: %v", declared, err)
					}
					continue
				}
				e, ok := apperr.As(err)
				if !ok || e.Code != tc.code || e.Kind != tc.kind {
					t.Fatalf("declared %v: got %v, want %s", declared, err, tc.code)
				}
				if tc.kind == apperr.KindInvalid && (len(e.Fields) != 1 || e.Fields[0].Field != BodyField) {
					t.Fatalf("fields %+v, want %s", e.Fields, BodyField)
				}
			}
		})
	}
}

// TestDecodeJSONBody holds the callback's rules: the bytes it read itself, then DecodeJSON's
// Content-Type and object rules.
func TestDecodeJSONBody(t *testing.T) {
	t.Parallel()
	cases := []struct{ body, ct, code string }{
		{`{"name":"x"}`, "application/json", ""},
		{`{"name":"x"}`, "", ""},
		{`{"name":"x"}`, "text/plain", "unsupported_media_type"},
		{`null`, "application/json", "invalid_request"},
		{`[]`, "application/json", "invalid_request"},
		{`{"nmae":"x"}`, "application/json", "unknown_field"},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("POST", "/", nil)
		if tc.ct != "" {
			r.Header.Set("Content-Type", tc.ct)
		}
		var v sample
		err := DecodeJSONBody(r, []byte(tc.body), &v)
		if e, _ := apperr.As(err); (tc.code == "" && err != nil) || (tc.code != "" && (e == nil || e.Code != tc.code)) {
			t.Errorf("%s %q: got %v, want %q", tc.ct, tc.body, err, tc.code)
		}
	}
}

func TestHandleWritesProblemsAndRecoversPanics(t *testing.T) {
	t.Parallel()
	h := Handle(func(w http.ResponseWriter, r *http.Request) error {
		if r.URL.Path == "/panic" {
			panic("boom")
		}
		return apperr.New(apperr.KindGone, "session_expired", "gone")
	})
	for path, status := range map[string]int{"/x": 410, "/panic": 500} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		var p map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &p)
		if rec.Code != status || rec.Header().Get("Content-Type") != "application/problem+json" || p["status"] != float64(status) {
			t.Errorf("%s: %d %s %v", path, rec.Code, rec.Header().Get("Content-Type"), p)
		}
		if status == 500 && strings.Contains(rec.Body.String(), "boom") {
			t.Errorf("panic value leaked to the caller: %s", rec.Body.String())
		}
	}
}
