package funcproto

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFlexInt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw string
		want      int
		wantErr   bool
	}{
		{"number", `3`, 3, false},
		{"string", `"3"`, 3, false},
		{"quoted string", `"\"3\""`, 3, false},
		{"float form", `2.0`, 2, false},
		{"null", `null`, 0, false},
		{"absent", ``, 0, false},
		{"empty string", `""`, 0, false},
		{"text", `"three"`, 0, true},
		{"fraction", `2.5`, 0, true},
		{"negative", `-1`, 0, true},
		{"object", `{}`, 0, true},
		{"huge", `1e300`, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := flexInt(json.RawMessage(tt.raw), "Metadata.DequeueCount")
			if tt.wantErr {
				wantInvalid(t, err, "Metadata.DequeueCount")
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("flexInt(%s) = %d, %v; want %d", tt.raw, got, err, tt.want)
			}
		})
	}
}

func TestFlexString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw, want string
		wantErr         bool
	}{
		{"plain", `"abc"`, "abc", false},
		{"embedded quotes", `"\"abc\""`, "abc", false},
		{"two layers", `"\"\\\"abc\\\"\""`, "abc", false},
		{"lone quote kept", `"\"abc"`, `"abc`, false},
		{"number", `12`, "12", false},
		{"bool", `true`, "true", false},
		{"null", `null`, "", false},
		{"array", `["a"]`, "", true},
		{"object", `{"a":1}`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := flexString(json.RawMessage(tt.raw), "Metadata.Id")
			if tt.wantErr {
				wantInvalid(t, err, "Metadata.Id")
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("flexString(%s) = %q, %v; want %q", tt.raw, got, err, tt.want)
			}
		})
	}
}

func TestFlexTime(t *testing.T) {
	t.Parallel()
	want := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name, raw string
		want      time.Time
		wantErr   bool
	}{
		{"rfc3339 offset", `"2026-11-22T10:00:00+00:00"`, want, false},
		{"rfc3339 Z", `"2026-11-22T10:00:00Z"`, want, false},
		{"other zone", `"2026-11-22T11:00:00+01:00"`, want, false},
		{"dotnet seven digits", `"2026-11-22T10:00:00.0000000+00:00"`, want, false},
		{"embedded quotes", `"\"2026-11-22T10:00:00+00:00\""`, want, false},
		{"no zone is UTC", `"2026-11-22T10:00:00"`, want, false},
		{"dotnet invariant", `"11/22/2026 10:00:00 AM +00:00"`, want, false},
		{"null", `null`, time.Time{}, false},
		{"empty", `""`, time.Time{}, false},
		{"garbage", `"next tuesday"`, time.Time{}, true},
		{"number", `1700000000`, time.Time{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := flexTime(json.RawMessage(tt.raw), "Metadata.InsertionTime")
			if tt.wantErr {
				wantInvalid(t, err, "Metadata.InsertionTime")
				return
			}
			if err != nil || !got.Equal(tt.want) {
				t.Fatalf("flexTime(%s) = %v, %v; want %v", tt.raw, got, err, tt.want)
			}
		})
	}
}

func TestFlexBool(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]bool{`true`: true, `false`: false, `"true"`: true, `"False"`: false, `null`: false} {
		got, err := flexBool(json.RawMessage(raw), "IsPastDue")
		if err != nil || got != want {
			t.Errorf("flexBool(%s) = %v, %v; want %v", raw, got, err, want)
		}
	}
	_, err := flexBool(json.RawMessage(`"maybe"`), "IsPastDue")
	wantInvalid(t, err, "IsPastDue")
}

// queueInvocation builds a queue invocation with the given raw Data.msg and metadata members.
func queueInvocation(t *testing.T, msg string, meta string) *InvocationRequest {
	t.Helper()
	inv, err := ParseInvocation([]byte(`{"Data":{"msg":` + msg + `},"Metadata":{` + meta + `}}`))
	if err != nil {
		t.Fatalf("ParseInvocation: %v", err)
	}
	return inv
}

func TestQueueBodyRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, msg, want string
	}{
		{"documented: JSON string of the text", `"{\"groupId\":\"g1\"}"`, `{"groupId":"g1"}`},
		{"observed: encoded twice", `"\"{\\\"groupId\\\":\\\"g1\\\"}\""`, `{"groupId":"g1"}`},
		{"object given directly", `{"groupId": "g1"}`, `{"groupId":"g1"}`},
		{"object with spaces in a string", `"{ \"groupId\" : \"g1\" }"`, `{"groupId":"g1"}`},
		{"array", `[{"a":1},{"a":2}]`, `[{"a":1},{"a":2}]`},
		{"plain text", `"hello world"`, `hello world`},
		{"text that is a JSON string once decoded", `"\"hello\""`, `hello`},
		{"number text", `"42"`, `42`},
		{"null", `null`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := queueInvocation(t, tt.msg, `"DequeueCount":1`).QueueMessage("msg")
			if err != nil {
				t.Fatalf("QueueMessage: %v", err)
			}
			if string(m.Body) != tt.want {
				t.Fatalf("Body = %q, want %q", m.Body, tt.want)
			}
		})
	}
}

func TestQueueMetadataErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, meta, field string }{
		{"dequeue count text", `"DequeueCount":"once"`, "Metadata.DequeueCount"},
		{"id object", `"Id":{"a":1}`, "Metadata.Id"},
		{"pop receipt array", `"PopReceipt":[1]`, "Metadata.PopReceipt"},
		{"bad insertion time", `"InsertionTime":"yesterday"`, "Metadata.InsertionTime"},
		{"bad expiration time", `"ExpirationTime":"\"soon\""`, "Metadata.ExpirationTime"},
		{"bad next visible time", `"NextVisibleTime":true`, "Metadata.NextVisibleTime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := queueInvocation(t, `"{}"`, tt.meta).QueueMessage("msg")
			wantInvalid(t, err, tt.field)
		})
	}
}

func TestTriggerLookup(t *testing.T) {
	t.Parallel()
	inv, err := ParseInvocation([]byte(`{"Data":{"item":"{\"a\":1}"},"Metadata":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if m, err := inv.QueueMessage("msg"); err != nil || string(m.Body) != `{"a":1}` {
		t.Fatalf("the only member is taken when the name is missing: %q, %v", m.Body, err)
	}
	two, err := ParseInvocation([]byte(`{"Data":{"a":"1","b":"2"}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = two.QueueMessage("msg")
	wantInvalid(t, err, "Data.msg")
	_, err = two.QueueMessage("")
	wantInvalid(t, err, "Data")
	if m, err := two.QueueMessage("B"); err != nil || string(m.Body) != "2" {
		t.Fatalf("case-insensitive binding name: %q, %v", m.Body, err)
	}
}

// httpInvocation builds an HTTP invocation whose Data.req has the given raw members.
func httpInvocation(t *testing.T, members string) *InvocationRequest {
	t.Helper()
	inv, err := ParseInvocation([]byte(`{"Data":{"req":{"Url":"http://h/api/x?u=9","Method":"POST"` + members + `}},"Metadata":{}}`))
	if err != nil {
		t.Fatalf("ParseInvocation: %v", err)
	}
	return inv
}

func TestQueryRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, query string
		want        url.Values
	}{
		{"object", `"Query":{"a":"1","b":"2"}`, url.Values{"a": {"1"}, "b": {"2"}}},
		{"object with arrays and scalars", `"Query":{"a":["1","2"],"n":3,"z":null}`, url.Values{"a": {"1", "2"}, "n": {"3"}}},
		{"string holding an object", `"Query":"{\"a\":\"1\",\"b\":\"2\"}"`, url.Values{"a": {"1"}, "b": {"2"}}},
		{"string holding an object twice", `"Query":"\"{\\\"a\\\":\\\"1\\\"}\""`, url.Values{"a": {"1"}}},
		{"raw query string", `"Query":"a=1&b=2&b=3"`, url.Values{"a": {"1"}, "b": {"2", "3"}}},
		{"raw query string with ?", `"Query":"?a=1"`, url.Values{"a": {"1"}}},
		{"absent: from Url", ``, url.Values{"u": {"9"}}},
		{"null: from Url", `"Query":null`, url.Values{"u": {"9"}}},
		{"empty string: from Url", `"Query":""`, url.Values{"u": {"9"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			members := tt.query
			if members != "" {
				members = "," + members
			}
			d, err := httpInvocation(t, members).HTTPRequest("req")
			if err != nil {
				t.Fatalf("HTTPRequest: %v", err)
			}
			if diff := cmp.Diff(tt.want, d.Query); diff != "" {
				t.Fatalf("Query (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("bad", func(t *testing.T) {
		t.Parallel()
		for _, q := range []string{`"Query":[1]`, `"Query":"a=%zz"`, `"Query":{"a":{"b":1}}`} {
			_, err := httpInvocation(t, ","+q).HTTPRequest("req")
			if err == nil {
				t.Errorf("%s: no error", q)
				continue
			}
			wantInvalid(t, err, "")
		}
	})
}

func TestHeaderRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, headers string
		want          http.Header
	}{
		{"arrays", `{"content-type":["application/json"],"Accept":["a","b"]}`, http.Header{"Content-Type": {"application/json"}, "Accept": {"a", "b"}}},
		{"strings", `{"Content-Type":"application/json","x-n":5}`, http.Header{"Content-Type": {"application/json"}, "X-N": {"5"}}},
		{"string holding the object", `"{\"X-A\":[\"1\"]}"`, http.Header{"X-A": {"1"}}},
		{"null", `null`, http.Header{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := httpInvocation(t, `,"Headers":`+tt.headers).HTTPRequest("req")
			if err != nil {
				t.Fatalf("HTTPRequest: %v", err)
			}
			if diff := cmp.Diff(tt.want, d.Headers); diff != "" {
				t.Fatalf("Headers (-want +got):\n%s", diff)
			}
		})
	}
	_, err := httpInvocation(t, `,"Headers":{"X":{"y":1}}`).HTTPRequest("req")
	wantInvalid(t, err, "Data.req.Headers.X")
	_, err = httpInvocation(t, `,"Headers":[1]`).HTTPRequest("req")
	wantInvalid(t, err, "Data.req.Headers")
}

func TestBodyRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, contentType, body string
		want                    string
		wantErr                 bool
	}{
		{"string text", "application/json", `"{\"a\":1}"`, `{"a":1}`, false},
		{"string text no content type", "", `"hello"`, "hello", false},
		{"object re-serialised compactly in order", "application/json", `{"z": 1, "a": [1, 2.50], "s": "<&>"}`, `{"z":1,"a":[1,2.50],"s":"<&>"}`, false},
		{"array", "application/json", `[1, 2]`, `[1,2]`, false},
		{"number", "application/json", `12`, `12`, false},
		{"text/plain stays text even if base64-like", "text/plain", `"aGVsbG8="`, "aGVsbG8=", false},
		{"problem+json is text", "application/problem+json; charset=utf-8", `"{}"`, "{}", false},
		{"form is text", "application/x-www-form-urlencoded", `"a=1"`, "a=1", false},
		{"octet-stream base64", "application/octet-stream", `"aGVsbG8="`, "hello", false},
		{"octet-stream base64 unpadded", "application/octet-stream", `"aGVsbG8"`, "hello", false},
		{"octet-stream base64 with newlines", "application/octet-stream", `"aGVs\nbG8="`, "hello", false},
		{"pdf base64", "application/pdf", `"JVBERg=="`, "%PDF", false},
		{"multipart base64", "multipart/form-data; boundary=x", `"LS14"`, "--x", false},
		{"binary not base64", "image/png", `"not base64!"`, "", true},
		{"null", "application/json", `null`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hdr := `,"Headers":{}`
			if tt.contentType != "" {
				hdr = `,"Headers":{"Content-Type":"` + tt.contentType + `"}`
			}
			d, err := httpInvocation(t, hdr+`,"Body":`+tt.body).HTTPRequest("req")
			if tt.wantErr {
				wantInvalid(t, err, "Data.req.Body")
				return
			}
			if err != nil {
				t.Fatalf("HTTPRequest: %v", err)
			}
			if string(d.Body) != tt.want {
				t.Fatalf("Body = %q, want %q", d.Body, tt.want)
			}
		})
	}
}

func TestIsBinaryContentType(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]bool{
		"": false, "text/csv": false, "application/json": false, "application/vnd.api+json": false,
		"application/xml": false, "image/svg+xml": false, "application/javascript": false,
		"application/x-ndjson": false, "text/xml; charset=utf-8": false,
		"application/octet-stream": true, "application/pdf": true, "multipart/mixed": true,
		"image/png": true, "application/zip": true, "garbage;;": true,
	} {
		if got := IsBinaryContentType(ct); got != want {
			t.Errorf("IsBinaryContentType(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestParamsRules(t *testing.T) {
	t.Parallel()
	d, err := httpInvocation(t, `,"Params":"{\"id\":\"7\",\"n\":3,\"opt\":null}"`).HTTPRequest("req")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"id": "7", "n": "3"}, d.Params); diff != "" {
		t.Fatalf("Params (-want +got):\n%s", diff)
	}
	_, err = httpInvocation(t, `,"Params":{"id":["7"]}`).HTTPRequest("req")
	wantInvalid(t, err, "Data.req.Params.id")
}

func TestParseInvocationErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, field string }{
		{"empty", ``, "$"},
		{"not JSON", `{"Data":`, "$"},
		{"array", `[1]`, "$"},
		{"data is a number", `{"Data":1}`, "Data"},
		{"metadata is an array", `{"Data":{},"Metadata":[]}`, "Metadata"},
		{"sys time", `{"Metadata":{"sys":{"UtcNow":"never"}}}`, "Metadata.sys.UtcNow"},
		{"too deep", `{"Data":"\"\\\"\\\\\\\"\\\\\\\\\\\\\\\"{}\\\\\\\\\\\\\\\"\\\\\\\"\\\"\""}`, "Data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseInvocation([]byte(tt.body))
			wantInvalid(t, err, tt.field)
		})
	}
}

func TestParseInvocationTolerates(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body string }{
		{"data as a string holding the object", `{"Data":"{\"msg\":\"x\"}","Metadata":"{}"}`},
		{"lower-case members", `{"data":{"msg":"x"},"metadata":{"sys":{"methodName":"M"}}}`},
		{"no metadata", `{"Data":{"msg":"x"}}`},
		{"extra members", `{"Data":{"msg":"x"},"Metadata":{},"Identities":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv, err := ParseInvocation([]byte(tt.body))
			if err != nil {
				t.Fatalf("ParseInvocation: %v", err)
			}
			m, err := inv.QueueMessage("msg")
			if err != nil || string(m.Body) != "x" {
				t.Fatalf("QueueMessage = %q, %v", m.Body, err)
			}
		})
	}
}

func TestDecodeInvocationTooLarge(t *testing.T) {
	t.Parallel()
	_, err := DecodeInvocation(&zeroReader{n: MaxInvocationBytes + 10})
	if err == nil {
		t.Fatal("no error for an oversized invocation")
	}
	if e, ok := asAppErr(err); !ok || e.Code != "invocation_too_large" {
		t.Fatalf("error %v, want invocation_too_large", err)
	}
}

type zeroReader struct{ n int }

func (z *zeroReader) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, errEOF
	}
	if len(p) > z.n {
		p = p[:z.n]
	}
	for i := range p {
		p[i] = ' '
	}
	z.n -= len(p)
	return len(p), nil
}

func TestQueueBodyEncodingDepth(t *testing.T) {
	t.Parallel()
	msg := []byte(`{"groupId":"g1"}`)
	for layers := 1; layers <= 4; layers++ {
		raw := msg
		for i := 0; i < layers; i++ {
			b, err := json.Marshal(string(raw))
			if err != nil {
				t.Fatal(err)
			}
			raw = b
		}
		m, err := queueInvocation(t, string(raw), "").QueueMessage("msg")
		if err != nil || string(m.Body) != string(msg) {
			t.Errorf("%d layers: Body %q, %v", layers, m.Body, err)
		}
	}
}
