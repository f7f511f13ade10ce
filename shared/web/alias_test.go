package web

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/esign-svc/esign/shared/apperr"
)

// batchLike is a request shaped as the render route's: small fields and one large raw member.
type batchLike struct {
	Name    string `json:"name"`
	Options struct {
		Title string `json:"title"`
	} `json:"options"`
	Records  []struct{ N int } `json:"records"`
	Data     json.RawMessage   `json:"data"`
	Settings json.RawMessage   `json:"settings,omitempty"`
}

// bigData is a raw member past aliasMin: an array of records.
func bigData() string {
	return `[` + strings.Repeat(`{"notes":"`+strings.Repeat("n", 1000)+`"},`, 100) + `{}]`
}

// TestLargeBodyRawFieldIsASliceOfTheBody: a body past aliasMin is read into one buffer of its
// declared length and its raw member is that buffer's bytes, not a copy, with the other
// members decoded as before.
func TestLargeBodyRawFieldIsASliceOfTheBody(t *testing.T) {
	t.Parallel()
	data := bigData()
	body := `{"name":"n","options":{"title":"T"},"data": ` + data + ` ,"records":[{"N":1}],"settings":null}`
	r := httptest.NewRequest("POST", "/", strings.NewReader(body))
	var v batchLike
	if err := DecodeJSON(r, 1<<20, &v); err != nil {
		t.Fatal(err)
	}
	if string(v.Data) != data || v.Name != "n" || v.Options.Title != "T" || len(v.Records) != 1 || v.Records[0].N != 1 ||
		string(v.Settings) != "null" {
		t.Fatalf("decoded %q %+v %v %q", v.Name, v.Options, v.Records, v.Settings)
	}
	var want batchLike
	if err := decodeStrict([]byte(body), &want); err != nil || !reflect.DeepEqual(v, want) {
		t.Fatalf("differs from the strict decoding (%v)", err)
	}
	// the raw member's capacity ends with it: appending to it cannot write over the body
	if cap(v.Data) != len(v.Data) {
		t.Fatalf("dataSource capacity %d past its length %d", cap(v.Data), len(v.Data))
	}
	// and it lies in the buffer the body was read into: a Settings slice after it in the same array
	start, end := uintptr(unsafe.Pointer(unsafe.SliceData(v.Data))), uintptr(unsafe.Pointer(unsafe.SliceData(v.Settings)))
	if end <= start || end-start != uintptr(strings.Index(body, `null}`)-strings.Index(body, `[`)) {
		t.Fatalf("data and settings are not slices of one body buffer (%d bytes apart)", end-start)
	}
}

// TestLargeBodyErrorsAsBefore: every refusal of a body is the same past aliasMin, a fault after
// or inside the large raw member named as it was.
func TestLargeBodyErrorsAsBefore(t *testing.T) {
	t.Parallel()
	data := bigData()
	cases := []struct{ name, body, code, field string }{
		{"unknown after the raw member", `{"data":` + data + `,"nmae":"x"}`, "unknown_field", "nmae"},
		{"nested unknown", `{"data":` + data + `,"options":{"titel":"x"}}`, "unknown_field", "options.titel"},
		{"type with its index", `{"data":` + data + `,"records":[{"N":1},{"N":"x"}]}`, "invalid_request", "records[1].N"},
		{"first fault in body order", `{"nmae":1,"data":` + data + `,"name":2}`, "unknown_field", "nmae"},
		{"raw member in another case", `{"DATA":` + data + `}`, "", ""},
		{"invalid UTF-8 in the raw member", `{"data":[{"notes":"a` + "\xff" + `"},` + data + `]}`, "invalid_request", "data[0].notes"},
		{"trailing data", `{"data":` + data + `}}`, "invalid_json", "body"},
		{"second object", `{"data":` + data + `} {}`, "invalid_json", "body"},
		{"syntax", `{"data":` + data + `,"name":}`, "invalid_json", "body"},
		{"array", `[` + data + `]`, "invalid_request", "body"},
		{"unterminated", `{"data":` + data, "invalid_json", "body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if len(tc.body) < aliasMin {
				t.Fatalf("body of %d bytes, under aliasMin", len(tc.body))
			}
			var v batchLike
			err := DecodeJSON(httptest.NewRequest("POST", "/", strings.NewReader(tc.body)), 1<<20, &v)
			var ref batchLike
			want := decodeStrict([]byte(tc.body), &ref)
			if !utf8Checked(tc.body) {
				want = checkUTF8([]byte(tc.body))
			} else if e := jsonObject([]byte(tc.body)); e != nil {
				want = e
			}
			if tc.code == "" {
				if err != nil || want != nil || !reflect.DeepEqual(v, ref) {
					t.Fatalf("got %v (strict: %v)", err, want)
				}
				return
			}
			e, ok := apperr.As(err)
			if !ok || e.Code != tc.code || len(e.Fields) != 1 || e.Fields[0].Field != tc.field {
				t.Fatalf("got %v, want %s naming %s", err, tc.code, tc.field)
			}
			if w, _ := apperr.As(want); w == nil || w.Code != e.Code || w.Fields[0] != e.Fields[0] {
				t.Fatalf("got %v, the strict decoding %v", err, want)
			}
		})
	}
}

func isCode(err error, code string) bool {
	e, ok := apperr.As(err)
	return ok && e.Code == code
}

func utf8Checked(body string) bool { return checkUTF8([]byte(body)) == nil }

// TestReadBodyDeclaredLength: a body read into its declared length is the same bytes as read
// by io.ReadAll, when the body is shorter or longer than declared too, and over the limit is 413.
func TestReadBodyDeclaredLength(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("0123456789", 1000)
	for _, declared := range []int64{-1, 0, 1, 9999, 10000, 10001, 20000} {
		r := httptest.NewRequest("POST", "/", io.NopCloser(strings.NewReader(body)))
		r.ContentLength = declared
		got, err := ReadBody(r, 20000)
		if err != nil || string(got) != body {
			t.Fatalf("declared %d: %d bytes (%v)", declared, len(got), err)
		}
	}
	r := httptest.NewRequest("POST", "/", io.NopCloser(strings.NewReader(body)))
	r.ContentLength = 100
	if _, err := ReadBody(r, 9999); !isCode(err, CodeBodyTooLarge) {
		t.Fatalf("longer than declared and the limit: %v", err)
	}
	r = httptest.NewRequest("POST", "/", strings.NewReader(body))
	if got, err := ReadBody(r, 10000); err != nil || len(got) != len(body) || cap(got) != len(body)+1 {
		t.Fatalf("declared length: %d bytes in a buffer of %d (%v)", len(got), cap(got), err)
	}
}

// FuzzDecodeAliased: whatever the body, the decoding that aliases raw members either declines
// (the strict decoding then answers) or takes exactly what the strict decoding takes, into the
// same value; and it declines a body the strict decoding takes only when a key names the raw
// member in another case.
func FuzzDecodeAliased(f *testing.F) {
	for _, s := range []string{
		`{"title":"Offer","raw":[{"a":1},"x",null],"signers":[{"name":"Ada"}],"tag":"t"}`,
		`{"raw":null}`,
		`{"raw":1,"raw":{"b":[]}}`,
		`{"ra\u0077":"escaped name"}`,
		`{"RAW":1}`,
		`{"raw" : "a\"}b" , "count":"x"}`,
		`{"raw":[1],"nmae":2}`,
		`{"raw":{}}}`,
		` {"raw":[],"meta":{"a":"x"}} `,
		`{"raw":[` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got, want fuzzBody
		took := decodeAliased(body, &got)
		err := decodeStrict(body, &want)
		if took {
			if err != nil {
				t.Fatalf("took a body the strict decoding refuses: %q: %v", body, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded %q as %+v, strictly %+v", body, got, want)
			}
			if len(got.Raw) > 0 && !bytes.Contains(body, got.Raw) {
				t.Fatalf("raw member %q not in the body", got.Raw)
			}
			return
		}
		if b := bytes.TrimLeft(body, " \t\r\n"); err == nil && len(b) > 0 && b[0] == '{' && !otherCaseRaw(body) {
			t.Fatalf("declined a body the strict decoding takes: %q", body)
		}
	})
}

// otherCaseRaw reports whether a top-level key of body (one valid object) is "raw" in another case.
func otherCaseRaw(body []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.Token()
	for dec.More() {
		tok, _ := dec.Token()
		if k, _ := tok.(string); k != "raw" && strings.EqualFold(k, "raw") {
			return true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return true
		}
	}
	return false
}

// heldBody is a body already in memory that hands its bytes over (a Functions invocation's).
type heldBody struct{ b []byte }

func (h *heldBody) Read(p []byte) (int, error) {
	if len(h.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, h.b)
	h.b = h.b[n:]
	return n, nil
}
func (h *heldBody) Close() error      { return nil }
func (h *heldBody) TakeBytes() []byte { b := h.b; h.b = nil; return b }

// TestReadBodyTakesAHeldBody: a body that holds its bytes is taken whole, not copied, within
// the limit, and is 413 past it.
func TestReadBodyTakesAHeldBody(t *testing.T) {
	t.Parallel()
	held := []byte(`{"name":"x"}`)
	r := httptest.NewRequest("POST", "/", nil)
	r.Body = &heldBody{held}
	got, err := ReadBody(r, int64(len(held)))
	if err != nil || unsafe.SliceData(got) != unsafe.SliceData(held) || len(got) != len(held) {
		t.Fatalf("got %q (%v), not the held bytes", got, err)
	}
	r.Body = &heldBody{held}
	if _, err := ReadBody(r, int64(len(held))-1); !isCode(err, CodeBodyTooLarge) {
		t.Fatalf("past the limit: %v", err)
	}
}
