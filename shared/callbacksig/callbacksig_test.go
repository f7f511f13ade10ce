package callbacksig

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

const (
	sec1 = "0123456789abcdef0123456789abcdef-one"
	sec2 = "0123456789abcdef0123456789abcdef-two"
)

var now = time.Unix(1_780_000_000, 0)

func code(err error) string {
	if err == nil {
		return ""
	}
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindUnauthenticated {
		return "not-unauthenticated: " + err.Error()
	}
	return e.Code
}

func TestSignVerify(t *testing.T) {
	t.Parallel()
	body := []byte(`{"callbackId":"c1","signaturePng":"iVBOR"}`)
	h := Sign(sec1, now, body)
	if !strings.HasPrefix(h, "t=1780000000,v1=") || len(h) != len("t=1780000000,v1=")+64 {
		t.Fatalf("header %q", h)
	}
	v1 := strings.TrimPrefix(h, "t=1780000000,v1=")
	other := strings.TrimPrefix(Sign(sec2, now, body), "t=1780000000,v1=")
	tests := []struct {
		name    string
		header  string
		body    string
		now     time.Time
		secrets []string
		want    string
	}{
		{"ok", h, string(body), now, []string{sec1}, ""},
		{"ok second secret (rotation)", h, string(body), now, []string{sec2, sec1}, ""},
		{"ok several v1, one matches", "t=1780000000,v1=" + other + ",v1=" + v1, string(body), now, []string{sec1}, ""},
		{"ok unknown scheme ignored", h + ",v2=zzz", string(body), now, []string{sec1}, ""},
		{"ok uppercase hex", "t=1780000000,v1=" + strings.ToUpper(v1), string(body), now, []string{sec1}, ""},
		{"ok 299 s late", h, string(body), now.Add(299 * time.Second), []string{sec1}, ""},
		{"ok 300 s early", h, string(body), now.Add(-300 * time.Second), []string{sec1}, ""},
		{"stale", h, string(body), now.Add(301 * time.Second), []string{sec1}, CodeStale},
		{"from the future", h, string(body), now.Add(-301 * time.Second), []string{sec1}, CodeStale},
		{"stale and wrong", h, "x", now.Add(time.Hour), []string{sec1}, CodeInvalid},
		{"wrong secret", h, string(body), now, []string{sec2}, CodeInvalid},
		{"body changed", h, string(body) + " ", now, []string{sec1}, CodeInvalid},
		{"time changed", "t=1780000001,v1=" + v1, string(body), now, []string{sec1}, CodeInvalid},
		{"missing", "", string(body), now, []string{sec1}, CodeMissing},
		{"no v1", "t=1780000000", string(body), now, []string{sec1}, CodeInvalid},
		{"no t", "v1=" + v1, string(body), now, []string{sec1}, CodeInvalid},
		{"two t", "t=1780000000,t=1780000000,v1=" + v1, string(body), now, []string{sec1}, CodeInvalid},
		{"spaces", "t=1780000000, v1=" + v1, string(body), now, []string{sec1}, CodeInvalid},
		{"negative t", "t=-1,v1=" + v1, string(body), now, []string{sec1}, CodeInvalid},
		{"t with plus", "t=+1780000000,v1=" + v1, string(body), now, []string{sec1}, CodeInvalid},
		{"t huge", "t=99999999999999999999,v1=" + v1, string(body), now, []string{sec1}, CodeInvalid},
		{"short v1", "t=1780000000,v1=" + v1[:62], string(body), now, []string{sec1}, CodeInvalid},
		{"non-hex v1", "t=1780000000,v1=" + strings.Repeat("g", 64), string(body), now, []string{sec1}, CodeInvalid},
		{"unknown key", h + ",foo=bar", string(body), now, []string{sec1}, CodeInvalid},
		{"trailing comma", h + ",", string(body), now, []string{sec1}, CodeInvalid},
		{"empty value", "t=,v1=" + v1, string(body), now, []string{sec1}, CodeInvalid},
		{"too many v1", "t=1780000000" + strings.Repeat(",v1="+other, 8) + ",v1=" + v1, string(body), now, []string{sec1}, CodeInvalid},
		{"too long", h + strings.Repeat(",v9=x", 300), string(body), now, []string{sec1}, CodeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := code(Verify(tc.header, []byte(tc.body), tc.now, tc.secrets)); got != tc.want {
				t.Fatalf("code = %q, want %q", got, tc.want)
			}
		})
	}
	if err := Verify(h, body, now, nil); err == nil || apperr.KindOf(err) != apperr.KindInternal {
		t.Fatalf("no secrets: %v", err)
	}
}

func TestParseSecrets(t *testing.T) {
	t.Parallel()
	got, err := ParseSecrets(" " + sec1 + " ," + sec2)
	if err != nil || len(got) != 2 || got[0] != sec1 || got[1] != sec2 {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "short", sec1 + ",", sec1 + "," + sec1} {
		_, err := ParseSecrets(bad)
		if err == nil {
			t.Fatalf("ParseSecrets(%q) accepted", bad)
		}
		if strings.Contains(err.Error(), sec1) {
			t.Fatal("error leaks a secret")
		}
	}
}

// FuzzParseHeader: no input panics; every refusal is a KindUnauthenticated error; whatever is
// accepted has a timestamp and 1..8 32-byte signatures.
func FuzzParseHeader(f *testing.F) {
	f.Add(Sign(sec1, now, []byte("{}")))
	f.Add("t=1,v1=" + strings.Repeat("a", 64) + ",v1=" + strings.Repeat("B", 64))
	f.Add("t=1,v0=x,v1=")
	f.Add(",,,=")
	f.Fuzz(func(t *testing.T, h string) {
		p, err := Parse(h)
		if err != nil {
			if c := code(err); c != CodeMissing && c != CodeInvalid {
				t.Fatalf("%q: %v", h, err)
			}
			return
		}
		if p.Timestamp < 0 || len(p.Signatures) == 0 || len(p.Signatures) > MaxSignatures {
			t.Fatalf("%q parsed to %+v", h, p)
		}
		for _, s := range p.Signatures {
			if len(s) != 32 {
				t.Fatalf("%q: signature of %d bytes", h, len(s))
			}
		}
		if Verify(h, nil, time.Unix(p.Timestamp, 0), []string{sec1}) == nil && !strings.Contains(strings.ToLower(h), mac(sec1, strconv.FormatInt(p.Timestamp, 10), nil)) {
			t.Fatalf("%q verified without the signature", h)
		}
	})
}
