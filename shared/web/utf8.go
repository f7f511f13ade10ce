package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/apperr"
)

// checkUTF8 refuses a body that is not valid UTF-8, naming the JSON path of the string that
// holds the first invalid byte: Go's decoder would silently turn it into U+FFFD, and the
// stored text would then differ from what was sent. Errors: 400 invalid_request naming the
// field (the object that holds it when the byte is in a field name; "body" at the top level);
// 400 invalid_json (field "body") when the byte is outside any string.
func checkUTF8(body []byte) error {
	if utf8.Valid(body) {
		return nil
	}
	off := invalidAt(body)
	msg := fmt.Sprintf("is not valid UTF-8 (byte %d of the body)", off+1)
	path, inKey, ok := pathAt(body, off)
	switch {
	case !ok:
		return apperr.Invalid(CodeInvalidJSON, apperr.Field("body", msg))
	case inKey:
		msg = fmt.Sprintf("has a field name that is not valid UTF-8 (byte %d of the body)", off+1)
	}
	return apperr.Invalid(CodeInvalidRequest, apperr.Field(path, msg))
}

// invalidAt is the offset of the first byte of body that is not part of valid UTF-8.
func invalidAt(body []byte) int {
	for i := 0; i < len(body); {
		r, size := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(body)
}

// frame is one open JSON container while walking the tokens.
type frame struct {
	object    bool
	key       string // the current member's name (objects)
	index     int    // the current element's index (arrays)
	expectKey bool
}

// pathAt walks body's JSON tokens and answers the path of the string token that holds byte off
// ("signers[1].namePrefill"; "body" at the top level) and whether that token is a field name.
// ok is false when the byte is not inside a string token or the JSON breaks before it.
func pathAt(body []byte, off int) (path string, inKey, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []frame
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return "", false, false
		}
		end := dec.InputOffset()
		isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].expectKey
		if _, isString := tok.(string); isString && int64(off) >= start && int64(off) < end {
			if isKey {
				return render(stack, false), true, true
			}
			return render(stack, true), false, true
		}
		if int64(off) < end {
			return "", false, false
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, frame{object: t == '{', expectKey: t == '{'})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if isKey {
				stack[len(stack)-1].key, stack[len(stack)-1].expectKey = t, false
				continue
			}
		}
		if len(stack) == 0 {
			return "", false, false
		}
		if top := &stack[len(stack)-1]; top.object {
			top.expectKey = true
		} else {
			top.index++
		}
	}
}

// render is the path of the open containers; withMember adds each object's current member
// (the innermost one only when the value itself is meant, not a field name inside it).
func render(stack []frame, withMember bool) string {
	var b []byte
	for i, f := range stack {
		switch {
		case !f.object:
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(f.index), 10)
			b = append(b, ']')
		case i == len(stack)-1 && !withMember:
		default:
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, f.key...)
		}
	}
	if len(b) == 0 {
		return "body"
	}
	return string(b)
}
