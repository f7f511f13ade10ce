package callbackapi

import (
	"net/http/httptest"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
)

// FuzzCallbackBody checks that no body makes the parser panic, that every refusal is a 400 or
// 413 problem, and that an accepted body carries a bounded, decodable PNG.
func FuzzCallbackBody(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"callbackId":"0123456789abcdef","sessionId":"6f1c2d2e-8a4b-4c1e-9d7a-0b1c2d3e4f50","accessToken":"a.b.c",` +
		`"signerName":"Ann","signaturePng":"iVBORw0KGgo=","fields":[{"name":"x","checked":true}],` +
		`"consents":[{"id":"document_reviewed","version":"2026-11-01","acceptedAt":"2026-11-22T10:00:00Z"}],"ip":"::1","userAgent":"u"}`))
	f.Add([]byte(`[1,2,3]`))
	f.Add([]byte(`{"fields":null,"consents":[{"id":"legally_binding"},{"id":"legally_binding"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := parseBody(httptest.NewRequest("POST", Path, nil), raw)
		if err != nil {
			k := apperr.KindOf(err)
			if k != apperr.KindInvalid && k != apperr.KindTooLarge {
				t.Fatalf("refusal of kind %v: %v", k, err)
			}
			return
		}
		if len(p.PNG) == 0 || len(p.PNG) > sessionstore.MaxSignaturePNG || p.Width < 1 || p.Height < 1 {
			t.Fatalf("accepted body with PNG of %d bytes %dx%d", len(p.PNG), p.Width, p.Height)
		}
	})
}

// TestFuzzSeedValid keeps the corpus honest: its "valid" entry passes every stateless check, so
// the fuzzer starts from a body that reaches the PNG decoding.
func TestFuzzSeedValid(t *testing.T) {
	t.Parallel()
	if _, err := parseBody(httptest.NewRequest("POST", Path, nil), validSeed(t)); err != nil {
		t.Fatalf("the valid seed is refused: %v", err)
	}
}
