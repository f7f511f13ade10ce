package funcproto

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// FuzzDecodeInvocation feeds arbitrary payloads to the decoder, every typed accessor and the
// adapters: nothing may panic, every error must be an invalid_invocation, and every reply to
// the host must be JSON.
func FuzzDecodeInvocation(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		if strings.Contains(filepath.Base(file), "response_") {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`{"Data":{"msg":{"a":1}},"Metadata":{"DequeueCount":"\"2\""}}`,
		`{"Data":{"req":{"Url":"http://h/api/x","Method":"GET","Query":"a=1&b=2","Headers":{"A":1}}}}`,
		`{"Data":"{\"timer\":\"{\\\"IsPastDue\\\":\\\"true\\\"}\"}"}`,
	} {
		f.Add([]byte(s))
	}
	okHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = AddOutput(r.Context(), "out", map[string]string{"p": Param(r, "id")})
		w.WriteHeader(http.StatusCreated)
	})
	httpAdapter := HTTPInvocation(okHandler)
	queueAdapter := QueueHandler(func(ctx context.Context, m QueueMessage) error {
		var v map[string]any
		return m.Decode(&v)
	})
	f.Fuzz(func(t *testing.T, payload []byte) {
		inv, err := ParseInvocation(payload)
		if err != nil {
			mustInvalid(t, err)
		} else {
			if _, err := inv.HTTPRequest(""); err != nil {
				mustInvalid(t, err)
			}
			if _, err := inv.QueueMessage(""); err != nil {
				mustInvalid(t, err)
			}
			if _, err := inv.Timer(""); err != nil {
				mustInvalid(t, err)
			}
		}
		for _, h := range []http.Handler{httpAdapter, queueAdapter} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/F", strings.NewReader(string(payload))))
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("reply is not JSON: %q", rec.Body.String())
			}
		}
	})
}

func mustInvalid(t *testing.T, err error) {
	t.Helper()
	var e *apperr.Error
	if !errors.As(err, &e) || e.Kind != apperr.KindInvalid || e.Code != CodeInvalidInvocation {
		t.Fatalf("error %v (%T) is not an invalid_invocation", err, err)
	}
}
