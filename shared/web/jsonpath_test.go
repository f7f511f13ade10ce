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

type typedItem struct {
	Index int    `json:"index"`
	Small uint8  `json:"small"`
	Name  string `json:"name"`
	Tags  []string
}

type typedRequest struct {
	Items []typedItem            `json:"items"`
	ByKey map[string][]typedItem `json:"byKey"`
	One   *typedItem             `json:"one"`
}

// A value of the wrong type is named by its full path, indices included.
func TestTypeErrorNamedByItsFullPath(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ body, field string }{
		"string for a number":  {`{"items":[{"index":1},{"index":"2"}]}`, "items[1].index"},
		"out of range":         {`{"items":[{"small":300}]}`, "items[0].small"},
		"object for a string":  {`{"one":{"name":{}}}`, "one.name"},
		"string for an array":  {`{"items":[{"Tags":"a"}]}`, "items[0].Tags"},
		"number in a list":     {`{"items":[{"Tags":["a",2]}]}`, "items[0].Tags[1]"},
		"in a map of slices":   {`{"byKey":{"k":[{},{"index":true}]}}`, "byKey.k[1].index"},
		"array for an object":  {`{"one":[]}`, "one"},
		"first in document":    {`{"items":[{"index":"x","name":1}]}`, "items[0].index"},
		"after an unknown key": {`{"items":[{"zz":1,"index":"x"}]}`, "items[0].index"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var v typedRequest
			err := DecodeJSONBytes([]byte(tc.body), &v)
			e, ok := apperr.As(err)
			if name == "after an unknown key" {
				// The decoder reports the first fault in the document: the unknown key.
				if !ok || e.Code != CodeUnknownField || e.Fields[0].Field != "items[0].zz" {
					t.Fatalf("got %v", err)
				}
				if p, ok := typeErrorPath([]byte(tc.body), &v); !ok || p != tc.field {
					t.Fatalf("typeErrorPath = %q %v, want %s", p, ok, tc.field)
				}
				return
			}
			if !ok || e.Code != CodeInvalidRequest || len(e.Fields) != 1 || e.Fields[0].Field != tc.field {
				t.Fatalf("got %v (%+v), want invalid_request at %s", err, e, tc.field)
			}
		})
	}
}
