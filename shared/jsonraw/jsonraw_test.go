package jsonraw

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzUnquote: whatever the text, Unquote and UnquoteInPlace take exactly the JSON strings encoding/json takes,
// with the same value.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`""`, `"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u20AC"`, `"\ud83d\ude00"`,
		`"\ud83d"`, `"\ud83dx"`, `"\ud83d\u0041"`, `"\ude00\ud83d"`, "\"a\xffb\"", "\"\xe2\x82\"", `"\x"`, `"a`,
		`"a"b"`, "\"\x01\"", `"\u12"`, `"é"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		var want string
		werr := json.Unmarshal(s, &want)
		got, ok := Unquote(bytes.Trim(s, " \t\r\n")) // a literal: its caller trims blanks
		if (werr == nil) != ok {
			t.Fatalf("%q: Unquote ok %t, encoding/json %v", s, ok, werr)
		}
		if ok && string(got) != want {
			t.Fatalf("%q: Unquote %q, encoding/json %q", s, got, want)
		}
		own := bytes.Clone(bytes.Trim(s, " \t\r\n"))
		if in, iok := UnquoteInPlace(own); iok != ok || (ok && string(in) != want) {
			t.Fatalf("%q: UnquoteInPlace %q (%t), encoding/json %q", s, in, iok, want)
		}
	})
}

// FuzzMembers: for any JSON object, Members gives encoding/json's members in order, as slices
// of the object.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b":[1,{"c":"]}"}], "a":null } `, `{"k\"":"v\\"}`, `{"x":-1.5e3,"y":true}`,
		`[]`, `{"a":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, obj []byte) {
		if !json.Valid(obj) {
			return
		}
		var keys []string
		var vals []json.RawMessage
		ok := Members(obj, func(key, val []byte) bool {
			var k string
			if err := json.Unmarshal(key, &k); err != nil {
				t.Fatalf("key %q: %v", key, err)
			}
			if cap(val) != len(val) || len(val) == 0 || !json.Valid(val) {
				t.Fatalf("value %q (capacity %d)", val, cap(val))
			}
			keys, vals = append(keys, k), append(vals, val)
			return true
		})
		dec := json.NewDecoder(bytes.NewReader(obj))
		if tok, _ := dec.Token(); tok != json.Delim('{') {
			if ok {
				t.Fatalf("took %q, not an object", obj)
			}
			return
		}
		if !ok {
			t.Fatalf("refused the object %q", obj)
		}
		for i := 0; dec.More(); i++ {
			tok, _ := dec.Token()
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			if i >= len(keys) || keys[i] != tok.(string) || !bytes.Equal(vals[i], v) {
				t.Fatalf("%q: member %d is %q: %q, Members gave %q %q", obj, i, tok, v, keys, vals)
			}
			if len(keys) != i+1 && !dec.More() {
				t.Fatalf("%q: Members gave %d members", obj, len(keys))
			}
		}
	})
}
