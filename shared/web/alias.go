package web

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"github.com/esign-svc/esign/shared/jsonraw"
)

// aliasMin is the body size from which DecodeJSONBytes lets a struct's top-level raw JSON
// fields (json.RawMessage: the render request's dataSource) be slices of the body instead of
// copies. Below it the decoding is json.Decoder's alone, as it always was: a small body gains
// nothing from the extra pass.
const aliasMin = 64 << 10

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// decodeAliased decodes body, one JSON object of valid UTF-8, into v (a pointer to a struct
// with top-level json.RawMessage fields) with DecodeJSONBytes' rules, those fields aliasing
// body's bytes: encoding/json copies a RawMessage out of its input, and its Decoder first
// copies the whole value into its own buffer, so that a 23 MiB batch body was held three times
// over. The members other than the aliased ones are decoded by one strict json.Decoder as one
// object (in their order, so that its first error is the same); the aliased ones, which take any
// JSON value, are set after. It reports false, having set nothing of v that matters, when it
// cannot decode body that way or finds any fault at all: the caller then decodes the whole
// body as before, and that decoding names the fault (decodeStrict). Any body a key of which
// names an aliased field otherwise than by its exact name (in another case) is left to it too:
// the order of the two would decide which one wins.
func decodeAliased(body []byte, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return false
	}
	raw := rawFields(rv.Elem().Type())
	if len(raw) == 0 || !json.Valid(body) {
		return false // trailing data, a syntax error: decodeStrict's to name
	}
	type alias struct {
		field int
		val   []byte
	}
	var set []alias
	rest := make([]byte, 1, 512)
	rest[0] = '{'
	ok := jsonraw.Members(body, func(key, val []byte) bool {
		name := string(key[1 : len(key)-1])
		if bytes.IndexByte(key, '\\') >= 0 && json.Unmarshal(key, &name) != nil {
			return false
		}
		if f, hit := raw[name]; hit {
			set = append(set, alias{f, val})
			return true
		}
		for n := range raw {
			if strings.EqualFold(n, name) {
				return false
			}
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		rest = append(rest, key...)
		rest = append(rest, ':')
		rest = append(rest, val...)
		return true
	})
	if !ok {
		return false
	}
	rest = append(rest, '}')
	dec := json.NewDecoder(bytes.NewReader(rest))
	dec.DisallowUnknownFields()
	if dec.Decode(v) != nil {
		return false
	}
	st := rv.Elem()
	for _, a := range set {
		st.Field(a.field).SetBytes(a.val) // capped by Members: an append copies
	}
	return true
}

var rawFieldCache sync.Map // reflect.Type -> map[string]int

// rawFields maps the JSON names of struct t's own json.RawMessage fields to their index: the
// fields decodeAliased may alias. A name encoding/json would not decode exactly into that one
// field (two fields of t with the name, or another field whose name is the same but for case)
// is left out.
func rawFields(t reflect.Type) map[string]int {
	if m, ok := rawFieldCache.Load(t); ok {
		return m.(map[string]int)
	}
	own := map[string]int{}
	count := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" || (f.Anonymous && name == "") || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		count[name]++
		if f.Type == rawMessageType {
			own[name] = i
		}
	}
	out := map[string]int{}
	for name, i := range own {
		if count[name] != 1 {
			continue
		}
		clash := false
		for other := range jsonFields(t) {
			if other != name && strings.EqualFold(other, name) {
				clash = true
			}
		}
		if !clash {
			out[name] = i
		}
	}
	rawFieldCache.Store(t, out)
	return out
}
