package web

import (
	"encoding/json"
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
		{"array", `[1]`, "", "invalid_request", "body", apperr.KindInvalid},
		{"too large", `{"name":"` + strings.Repeat("a", 200) + `"}`, "", "body_too_large", "", apperr.KindTooLarge},
		{"wrong type", `{}`, "text/plain", "unsupported_media_type", "", apperr.KindInvalid},
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
