package web

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// TestStreamBody holds the document route's rules: the Content-Type when set, the declared
// length before anything is read, and the limit while the route reads.
func TestStreamBody(t *testing.T) {
	t.Parallel()
	const limit = 64
	cases := []struct {
		name, body, ct, code string
		kind                 apperr.Kind
		atOpen               bool // refused before a reader is given (only when the length is declared)
	}{
		{"empty", ``, "", "", 0, false},
		{"the type", `%PDF`, "application/pdf", "", 0, false},
		{"the type with a parameter", `%PDF`, "application/pdf; name=a.pdf", "", 0, false},
		{"no type", `%PDF`, "", "", 0, false},
		{"at the limit", strings.Repeat("a", limit), "application/pdf", "", 0, false},
		{"past the limit", strings.Repeat("a", limit+1), "application/pdf", CodeBodyTooLarge, apperr.KindTooLarge, true},
		{"far past the limit", strings.Repeat("a", 10*limit), "application/pdf", CodeBodyTooLarge, apperr.KindTooLarge, true},
		{"another type", `%PDF`, "application/json", CodeUnsupportedMediaType, apperr.KindInvalid, true},
		{"a type that does not parse", `%PDF`, "application/", CodeUnsupportedMediaType, apperr.KindInvalid, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, declared := range []bool{true, false} {
				var rd io.Reader = strings.NewReader(tc.body)
				if !declared {
					rd = io.MultiReader(rd)
				}
				r := httptest.NewRequest("POST", "/", rd)
				if tc.ct != "" {
					r.Header.Set("Content-Type", tc.ct)
				}
				body, err := StreamBody(r, "application/pdf", limit)
				var got []byte
				if err == nil {
					if tc.atOpen && declared {
						t.Fatalf("declared %v: no error before reading", declared)
					}
					got, err = io.ReadAll(body)
				}
				if tc.code == "" {
					if err != nil || string(got) != tc.body {
						t.Fatalf("declared %v: %v, read %d of %d bytes", declared, err, len(got), len(tc.body))
					}
					continue
				}
				e, ok := apperr.As(err)
				if !ok || e.Code != tc.code || e.Kind != tc.kind {
					t.Fatalf("declared %v: got %v, want %s", declared, err, tc.code)
				}
			}
		})
	}
}

type failingReader struct{ after int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.after == 0 {
		return 0, errors.New("connection reset")
	}
	n := min(len(p), f.after)
	f.after -= n
	return n, nil
}

// TestStreamBodyReadFailure: a body that breaks off is 400 body_unreadable, also when it breaks
// exactly at the limit.
func TestStreamBodyReadFailure(t *testing.T) {
	t.Parallel()
	for _, after := range []int{0, 10, 64} {
		r := httptest.NewRequest("POST", "/", &failingReader{after: after})
		body, err := StreamBody(r, "application/pdf", 64)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(body)
		if e, ok := apperr.As(err); !ok || e.Code != CodeBodyUnreadable || e.Kind != apperr.KindInvalid {
			t.Errorf("after %d bytes: got %v, want %s", after, err, CodeBodyUnreadable)
		}
	}
}
