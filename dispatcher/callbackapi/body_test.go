package callbackapi

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// validSeed is the corpus's valid body (TestFuzzSeedValid keeps it valid).
func validSeed(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzCallbackBody", "valid"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	raw, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(raw)
}

// TestParseBodyRefusesBadTextNamingTheField: the callback's reported text is one line under
// shared/text's rule, and a raw body that is not UTF-8 is refused before decoding.
func TestParseBodyRefusesBadTextNamingTheField(t *testing.T) {
	t.Parallel()
	valid := validSeed(t)
	for _, tc := range []struct {
		name, old, new, field string
	}{
		{"C1 in signerName", `"signerName": "`, `"signerName": "\u009b`, "signerName"},
		{"isolate in signerName", `"signerName": "`, `"signerName": "\u2066`, "signerName"},
		{"tab in userAgent", `"userAgent": "`, `"userAgent": "\t`, "userAgent"},
		{"line separator in userAgent", `"userAgent": "`, `"userAgent": "\u2028`, "userAgent"},
		{"raw invalid UTF-8 in signerName", `"signerName": "`, "\"signerName\": \"\xc3(", "signerName"},
		{"raw invalid UTF-8 in a consent", `"acceptedAt": "`, "\"acceptedAt\": \"\xff", "consents[0].acceptedAt"},
	} {
		raw := bytes.Replace(valid, []byte(tc.old), []byte(tc.new), 1)
		if bytes.Equal(raw, valid) {
			t.Fatalf("%s: the seed has no %s", tc.name, tc.old)
		}
		_, err := parseBody(httptest.NewRequest("POST", Path, nil), raw)
		e, ok := apperr.As(err)
		if !ok || e.Kind != apperr.KindInvalid || e.Code != apperr.CodeInvalidRequest || len(e.Fields) != 1 || e.Fields[0].Field != tc.field {
			t.Errorf("%s: %#v, want 400 invalid_request naming %s", tc.name, err, tc.field)
		}
	}
}
