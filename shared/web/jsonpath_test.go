package web

import (
	"encoding/json"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

type pathSigner struct {
	Email   string `json:"email"`
	Options *struct {
		Locale string `json:"locale"`
	} `json:"options,omitempty"`
}

type pathCommon struct {
	Title string `json:"title"`
}

type pathRaw struct{ v string }

func (p *pathRaw) UnmarshalJSON(b []byte) error { p.v = string(b); return nil }

type pathRequest struct {
	pathCommon
	Signers  []pathSigner            `json:"signers"`
	Pairs    [2]pathSigner           `json:"pairs"`
	Meta     map[string]pathSigner   `json:"meta"`
	Free     map[string]any          `json:"free"`
	Custom   pathRaw                 `json:"custom"`
	Ignored  string                  `json:"-"`
	Untagged string                  // decoded under its Go name
	Nested   map[string][]pathSigner `json:"nested"`
}

// An unknown field is named by its full JSON path, as a caller would write it to find it.
func TestUnknownFieldNamedByItsFullPath(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ body, field string }{
		"top level":              {`{"title":"t","nmae":"x"}`, "nmae"},
		"in an array element":    {`{"signers":[{"email":"a"},{"email":"b","requireOtp":true}]}`, "signers[1].requireOtp"},
		"in a pointer struct":    {`{"signers":[{"options":{"locale":"de","tz":"x"}}]}`, "signers[0].options.tz"},
		"in a fixed array":       {`{"pairs":[{},{"x":1}]}`, "pairs[1].x"},
		"in a map value":         {`{"meta":{"k1":{"email":"a"},"k2":{"mail":"b"}}}`, "meta.k2.mail"},
		"map of slices":          {`{"nested":{"a":[{"email":"x","bad":1}]}}`, "nested.a[0].bad"},
		"first in document":      {`{"signers":[{"zz":1}],"aa":2}`, "signers[0].zz"},
		"a json:\"-\" field":     {`{"Ignored":"x"}`, "Ignored"},
		"case-insensitive known": {`{"TITLE":"t","SIGNERS":[{"EMAIL":"a","Extra":1}]}`, "SIGNERS[0].Extra"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var v pathRequest
			err := DecodeJSONBytes([]byte(tc.body), &v)
			e, ok := apperr.As(err)
			if !ok || e.Code != CodeUnknownField || len(e.Fields) != 1 || e.Fields[0].Field != tc.field {
				t.Fatalf("got %v (%+v), want unknown_field at %s", err, e, tc.field)
			}
		})
	}
}

// What the decoder accepts stays accepted: the walk only names what it refused.
func TestKnownFieldsStillDecode(t *testing.T) {
	t.Parallel()
	body := `{"title":"t","Untagged":"u","signers":[{"email":"a","options":{"locale":"de"}}],` +
		`"meta":{"k":{"email":"m"}},"free":{"any":{"thing":1}},"custom":{"whatever":1},"nested":{"a":[]}}`
	var v pathRequest
	if err := DecodeJSONBytes([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if v.Title != "t" || v.Untagged != "u" || v.Signers[0].Options.Locale != "de" || v.Meta["k"].Email != "m" || v.Custom.v != `{"whatever":1}` {
		t.Fatalf("decoded %+v", v)
	}
	if _, ok := unknownFieldPath([]byte(body), &v); ok {
		t.Fatal("a path found in a body with no unknown field")
	}
	var raw json.RawMessage
	if _, ok := unknownFieldPath([]byte(`{"a":1}`), &raw); ok {
		t.Fatal("a RawMessage has no unknown fields")
	}
}
