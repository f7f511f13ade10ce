package funcproto

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantInvalid fails unless err is an invalid_invocation naming field (field "" skips that).
func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok {
		t.Fatalf("error %v (%T) is not an *apperr.Error", err, err)
	}
	if e.Kind != apperr.KindInvalid || e.Code != CodeInvalidInvocation {
		t.Fatalf("error kind %v code %q, want KindInvalid %q", e.Kind, e.Code, CodeInvalidInvocation)
	}
	if field != "" && (len(e.Fields) != 1 || e.Fields[0].Field != field) {
		t.Fatalf("error fields %+v, want field %q", e.Fields, field)
	}
}

var errEOF = io.EOF

func asAppErr(err error) (*apperr.Error, bool) { return apperr.As(err) }
