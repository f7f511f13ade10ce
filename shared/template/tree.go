package template

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A value is one node of a settings tree: read from template.yaml (with its line and column)
// or from a request's JSON (line 0). The settings blocks are decoded from values, so that the
// package's defaults and a request's overrides pass through one strict decoder and a request's
// block can override the defaults key by key.
type value struct {
	kind      valueKind
	line, col int    // 1-based; 0 for JSON
	text      string // a string, or a number's decimal text
	b         bool
	keys      []*value // mapping keys (kind kString), in order
	vals      []*value // mapping values, or the items of a list
}

type valueKind uint8

const (
	kNull valueKind = iota
	kString
	kNumber
	kBool
	kMap
	kList
)

func (k valueKind) String() string {
	return [...]string{"null", "a string", "a number", "a boolean", "an object", "a list"}[k]
}

// get is the value of key in a mapping, or nil.
func (v *value) get(key string) *value {
	if v == nil || v.kind != kMap {
		return nil
	}
	for i, k := range v.keys {
		if k.text == key {
			return v.vals[i]
		}
	}
	return nil
}

// overlay is base with each of top's keys put in place of (or after) base's: the key-by-key
// override of a settings block. When either is not a mapping, top replaces base whole (a null
// clears the block; a wrong type is refused by the decoder). Neither is changed.
func overlay(base, top *value) *value {
	if base == nil || base.kind != kMap || top.kind != kMap {
		return top
	}
	out := &value{kind: kMap, line: base.line, col: base.col}
	for i, k := range base.keys {
		if top.get(k.text) == nil {
			out.keys, out.vals = append(out.keys, k), append(out.vals, base.vals[i])
		}
	}
	out.keys = append(out.keys, top.keys...)
	out.vals = append(out.vals, top.vals...)
	return out
}

// problem is an error found at a place in a tree: path is a JSON path under the tree's root.
type problem struct {
	path      string
	line, col int
	msg       string
	unknown   string // an unknown key of the mapping at path (msg is then empty)
}

// field is the JSON path of the problem's place and what is wrong there, for a request.
func (p *problem) field() (path, msg string) {
	if p.unknown == "" && p.msg == "" { // the empty key: every other problem has a message
		return p.path, `holds the empty key "", which is not a known key`
	}
	if p.unknown != "" {
		return joinKey(p.path, p.unknown), "is not a known key"
	}
	return p.path, p.msg
}

// text is the problem as a file's reader wants it: where in the tree, then what.
func (p *problem) text() string {
	if p.unknown != "" || p.msg == "" {
		return fmt.Sprintf("unknown key %q%s", p.unknown, where(p.path))
	}
	if p.path == "" {
		return p.msg
	}
	return p.path + ": " + p.msg
}

func at(v *value, path, format string, args ...any) *problem {
	p := &problem{path: path, msg: fmt.Sprintf(format, args...)}
	if v != nil {
		p.line, p.col = v.line, v.col
	}
	return p
}

// fromYAML turns a YAML node into a value. Anchors, aliases, merge keys, duplicate keys and tags
// other than the plain JSON-like ones are refused, so the tree is exactly what the file shows.
func fromYAML(n *yaml.Node, path string, depth int) (*value, *problem) {
	v := &value{line: n.Line, col: n.Column}
	if depth > maxDepth {
		return nil, at(v, path, "is nested too deeply")
	}
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return nil, at(v, path, "anchors and aliases are not allowed")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return nil, at(v, path, "must hold one YAML document")
		}
		return fromYAML(n.Content[0], path, depth)
	case yaml.MappingNode:
		v.kind = kMap
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			if kn.Kind != yaml.ScalarNode || kn.ShortTag() != "!!str" {
				if kn.ShortTag() == "!!merge" {
					return nil, at(&value{line: kn.Line, col: kn.Column}, path, "merge keys (<<) are not allowed")
				}
				return nil, at(&value{line: kn.Line, col: kn.Column}, path, "keys must be strings")
			}
			key := &value{kind: kString, line: kn.Line, col: kn.Column, text: kn.Value}
			if v.get(kn.Value) != nil {
				return nil, at(key, path, "duplicate key %q", kn.Value)
			}
			child, p := fromYAML(vn, joinKey(path, kn.Value), depth+1)
			if p != nil {
				return nil, p
			}
			v.keys, v.vals = append(v.keys, key), append(v.vals, child)
		}
	case yaml.SequenceNode:
		v.kind = kList
		for i, c := range n.Content {
			child, p := fromYAML(c, fmt.Sprintf("%s[%d]", path, i), depth+1)
			if p != nil {
				return nil, p
			}
			v.vals = append(v.vals, child)
		}
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str", "!!timestamp": // a timestamp is kept as written: dates are strings here
			v.kind, v.text = kString, n.Value
		case "!!null":
			v.kind = kNull
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, at(v, path, "is not a boolean")
			}
			v.kind, v.b = kBool, b
		case "!!int":
			var i int64
			if err := n.Decode(&i); err != nil {
				return nil, at(v, path, "is not a 64-bit integer")
			}
			v.kind, v.text = kNumber, strconv.FormatInt(i, 10)
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, at(v, path, "is not a finite number")
			}
			v.kind, v.text = kNumber, strconv.FormatFloat(f, 'g', -1, 64)
		default:
			return nil, at(v, path, "has the unsupported tag %s", n.ShortTag())
		}
	default:
		return nil, at(v, path, "is not a YAML value")
	}
	return v, nil
}

// fromJSON reads one JSON value into a value tree (numbers kept as written; duplicate keys
// refused).
func fromJSON(raw []byte) (*value, *problem) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, p := readJSON(dec, "", 0)
	if p != nil {
		return nil, p
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &problem{msg: "must be one JSON value"}
	}
	return v, nil
}

func readJSON(dec *json.Decoder, path string, depth int) (*value, *problem) {
	if depth > maxDepth {
		return nil, &problem{path: path, msg: "is nested too deeply"}
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, &problem{path: path, msg: "is not valid JSON"}
	}
	switch t := tok.(type) {
	case nil:
		return &value{kind: kNull}, nil
	case bool:
		return &value{kind: kBool, b: t}, nil
	case string:
		return &value{kind: kString, text: t}, nil
	case json.Number:
		return &value{kind: kNumber, text: t.String()}, nil
	case json.Delim:
		switch t {
		case '{':
			v := &value{kind: kMap}
			for dec.More() {
				kt, err := dec.Token()
				key, ok := kt.(string)
				if err != nil || !ok {
					return nil, &problem{path: path, msg: "is not valid JSON"}
				}
				if v.get(key) != nil {
					return nil, &problem{path: joinKey(path, key), msg: "is given twice"}
				}
				child, p := readJSON(dec, joinKey(path, key), depth+1)
				if p != nil {
					return nil, p
				}
				v.keys, v.vals = append(v.keys, &value{kind: kString, text: key}), append(v.vals, child)
			}
			if _, err := dec.Token(); err != nil {
				return nil, &problem{path: path, msg: "is not valid JSON"}
			}
			return v, nil
		case '[':
			v := &value{kind: kList}
			for i := 0; dec.More(); i++ {
				child, p := readJSON(dec, fmt.Sprintf("%s[%d]", path, i), depth+1)
				if p != nil {
					return nil, p
				}
				v.vals = append(v.vals, child)
			}
			if _, err := dec.Token(); err != nil {
				return nil, &problem{path: path, msg: "is not valid JSON"}
			}
			return v, nil
		}
	}
	return nil, &problem{path: path, msg: "is not valid JSON"}
}

func joinKey(path, key string) string {
	if key == "" {
		return path // the empty key is named by the object holding it (found by FuzzCreate)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// maxDepth bounds the nesting of a settings tree (the settings themselves are 3 levels deep).
const maxDepth = 32

// StringList is a list of strings that may also be given as one string (approversEmail).
type StringList []string

var stringListType = reflect.TypeFor[StringList]()

// valueType is a field a decoder keeps as written, for its own parser (a schema step's fields).
var valueType = reflect.TypeFor[*value]()

// decode fills dst (a pointer) from v by dst's json tags, refusing unknown keys and wrong types.
// A null leaves the zero value.
func decode(v *value, dst any, path string) *problem {
	return decodeValue(v, reflect.ValueOf(dst).Elem(), path)
}

func decodeValue(v *value, dst reflect.Value, path string) *problem {
	if v == nil || v.kind == kNull {
		dst.Set(reflect.Zero(dst.Type()))
		return nil
	}
	t := dst.Type()
	if t == valueType {
		dst.Set(reflect.ValueOf(v))
		return nil
	}
	if t == stringListType && v.kind == kString {
		dst.Set(reflect.ValueOf(StringList{v.text}))
		return nil
	}
	want := func(k valueKind) *problem {
		if v.kind != k {
			return at(v, path, "must be %s, not %s", k, v.kind)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if prob := decodeValue(v, p.Elem(), path); prob != nil {
			return prob
		}
		dst.Set(p)
	case reflect.Bool:
		if p := want(kBool); p != nil {
			return p
		}
		dst.SetBool(v.b)
	case reflect.String:
		if p := want(kString); p != nil {
			return p
		}
		dst.SetString(v.text)
	case reflect.Int:
		if p := want(kNumber); p != nil {
			return p
		}
		i, err := strconv.ParseInt(v.text, 10, 64)
		if err != nil || int64(int(i)) != i {
			return at(v, path, "must be an integer")
		}
		dst.SetInt(i)
	case reflect.Float64:
		if p := want(kNumber); p != nil {
			return p
		}
		f, err := strconv.ParseFloat(v.text, 64)
		if err != nil || math.IsInf(f, 0) {
			return at(v, path, "must be a finite number")
		}
		dst.SetFloat(f)
	case reflect.Slice:
		if p := want(kList); p != nil {
			return p
		}
		s := reflect.MakeSlice(t, len(v.vals), len(v.vals))
		for i, item := range v.vals {
			if p := decodeValue(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != nil {
				return p
			}
		}
		dst.Set(s)
	case reflect.Struct:
		if p := want(kMap); p != nil {
			return p
		}
		fields := structFields(t)
		for i, k := range v.keys {
			idx, ok := fields[k.text]
			if !ok {
				return &problem{path: path, line: k.line, col: k.col, unknown: k.text}
			}
			if p := decodeValue(v.vals[i], dst.Field(idx), joinKey(path, k.text)); p != nil {
				return p
			}
		}
	default:
		return at(v, path, "cannot be decoded into %s", t) // a programming error: a type above is missing
	}
	return nil
}

func where(path string) string {
	if path == "" {
		return ""
	}
	return " in " + path
}

// structFields maps a struct's json names to field indexes.
func structFields(t reflect.Type) map[string]int {
	out := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out[name] = i
	}
	return out
}
