package web

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/text"
)

type nested struct {
	Name    string `json:"name"`
	Signers []struct {
		Role        string `json:"role"`
		NamePrefill string `json:"namePrefill"`
	} `json:"signers"`
	Meta map[string]any `json:"meta"`
}

func TestDecodeJSONRefusesInvalidUTF8NamingThePath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, code, field, msg string
	}{
		{"top-level value", "{\"name\":\"a\xffb\"}", "invalid_request", "name", "byte 11 of the body"},
		{"array element", "{\"name\":\"x\",\"signers\":[{\"role\":\"r\"},{\"role\":\"r\",\"namePrefill\":\"\xc3\"}]}",
			"invalid_request", "signers[1].namePrefill", "is not valid UTF-8"},
		{"after nested containers", "{\"meta\":{\"a\":[1,{\"b\":[]}],\"c\":[\"ok\",\"\xed\xa0\x80\"]}}",
			"invalid_request", "meta.c[1]", "is not valid UTF-8"},
		{"field name", "{\"signers\":[{\"ro\xfele\":\"r\"}]}", "invalid_request", "signers[0]", "field name"},
		{"top-level field name", "{\"\xff\":1}", "invalid_request", "body", "field name"},
		{"top-level string", "\"\xff\"", "invalid_request", "body", "not valid UTF-8"},
		{"outside a string", "{\"name\":1\xff}", "invalid_json", "body", "not valid UTF-8"},
		{"after broken JSON", "{\"name\" 1, \"x\":\"\xff\"}", "invalid_json", "body", "not valid UTF-8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var v nested
			err := DecodeJSONBytes([]byte(tc.body), &v)
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindInvalid || e.Code != tc.code || len(e.Fields) != 1 ||
				e.Fields[0].Field != tc.field || !strings.Contains(e.Fields[0].Message, tc.msg) {
				t.Fatalf("got %#v, want %s at %s (%s)", err, tc.code, tc.field, tc.msg)
			}
		})
	}
	var v nested
	if err := DecodeJSONBytes([]byte(`{"name":"Zoë \ud83d\ude00 \ufffd","signers":[{"namePrefill":"é"}]}`), &v); err != nil || v.Name != "Zoë 😀 \uFFFD" {
		t.Fatalf("valid UTF-8 refused: %v %q", err, v.Name)
	}
}

func TestUserAgentIsCleanedNotRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (X11; Linux x86_64)"},
		{"UA\t1\u0085\u202e\xff", "UA\uFFFD1\uFFFD\uFFFD\uFFFD"},
		{strings.Repeat("a", 511) + "é", strings.Repeat("a", 511)},
		{strings.Repeat("b", 600), strings.Repeat("b", MaxUserAgent)},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("User-Agent", tc.in)
		got := UserAgent(r)
		if got != tc.want || text.Problem(got, text.Line) != "" {
			t.Errorf("UserAgent(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
