package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
)

// unknownFieldPath finds the first field of body (in document order) that the type of v does
// not have, and names it by its full JSON path (`signers[0].requireOtp`): encoding/json's own
// error names the bare key only. It walks the JSON next to the Go type with the decoder's
// matching rules (json tag names, else Go field names; exact match first, then case-insensitive;
// embedded structs' fields promoted). ok is false when no such field is found (a type with its
// own UnmarshalJSON, an interface), and the caller then names the bare key.
func unknownFieldPath(body []byte, v any) (path string, ok bool) {
	return walk(body, reflect.TypeOf(v), "", findUnknown)
}

// typeErrorPath finds the first value of body (in document order) that the type of v cannot
// take, named by its full JSON path (`signers[1].slotIndex`; encoding/json's own error says
// `signers.slotIndex`). ok is false when none is found (the caller keeps the decoder's name).
func typeErrorPath(body []byte, v any) (path string, ok bool) {
	return walk(body, reflect.TypeOf(v), "", findTypeError)
}

type target int

const (
	findUnknown   target = iota // a member the struct has no field for
	findTypeError               // a value the Go type cannot take
)

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func walk(raw []byte, t reflect.Type, path string, find target) (string, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		if t.Implements(unmarshalerType) {
			return "", false
		}
		t = t.Elem()
	}
	if t == nil || reflect.PointerTo(t).Implements(unmarshalerType) {
		return "", false
	}
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "", false
	}
	switch {
	case t.Kind() == reflect.Struct && raw[0] == '{':
		fields := jsonFields(t)
		found := ""
		ok := eachMember(raw, func(key string, val []byte) bool {
			ft, known := fields.lookup(key)
			if !known {
				found = joinPath(path, key)
				return find == findUnknown
			}
			if p, hit := walk(val, ft, joinPath(path, key), find); hit {
				found = p
				return true
			}
			return false
		})
		return found, ok && found != ""
	case t.Kind() == reflect.Map && raw[0] == '{':
		found := ""
		ok := eachMember(raw, func(key string, val []byte) bool {
			p, hit := walk(val, t.Elem(), joinPath(path, key), find)
			found = p
			return hit
		})
		return found, ok && found != ""
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && raw[0] == '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return "", false
		}
		for i, item := range items {
			if p, hit := walk(item, t.Elem(), path+"["+strconv.Itoa(i)+"]", find); hit {
				return p, true
			}
		}
		return "", false
	}
	if find == findTypeError && path != "" {
		// A value the walk does not descend into: let the decoder itself say whether the type
		// takes it (numbers out of range, strings into numbers, objects into strings, ...).
		var typ *json.UnmarshalTypeError
		if errors.As(json.Unmarshal(raw, reflect.New(t).Interface()), &typ) {
			return path, true
		}
	}
	return "", false
}

// eachMember calls fn with each member of the JSON object raw in document order until fn
// returns true; it reports whether fn did.
func eachMember(raw []byte, fn func(key string, val []byte) bool) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if dec.Decode(&val) != nil {
			return false
		}
		if fn(key, val) {
			return true
		}
	}
	return false
}

// joinPath names key's member of the object at path. An empty key is named by the object that
// holds it (the caller names the top-level object "body"): "" names nothing a client can find.
func joinPath(path, key string) string {
	if key == "" {
		return path
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

type fieldSet map[string]reflect.Type

// lookup matches key as encoding/json does: the exact name, else a case-insensitive one.
func (f fieldSet) lookup(key string) (reflect.Type, bool) {
	if t, ok := f[key]; ok {
		return t, true
	}
	for name, t := range f {
		if strings.EqualFold(name, key) {
			return t, true
		}
	}
	return nil, false
}

// jsonFields are the JSON names of struct t's fields as encoding/json decodes them, with the
// fields of untagged embedded structs promoted.
func jsonFields(t reflect.Type) fieldSet {
	out := fieldSet{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range jsonFields(et) {
					if _, taken := out[k]; !taken {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = ft
	}
	return out
}
