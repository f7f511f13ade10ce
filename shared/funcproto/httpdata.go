package funcproto

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/esign-svc/esign/shared/jsonraw"
)

// HTTPRequestData is an HTTP trigger's request as carried in an invocation.
type HTTPRequestData struct {
	URL     string
	Method  string
	Query   url.Values
	Headers http.Header
	Params  map[string]string
	Body    []byte
}

// HTTPRequest decodes the HTTP trigger binding named binding ("" or a missing name with a
// single Data member takes that member). The rules are in the package documentation.
// Errors: *apperr.Error KindInvalid code "invalid_invocation" naming the field at fault.
func (in *InvocationRequest) HTTPRequest(binding string) (HTTPRequestData, error) {
	return in.httpRequest(binding, false)
}

// httpRequest is HTTPRequest; take (the adapter's, on a payload of its own) also lets go of the
// payload's bytes (release) and unquotes a text Body over the payload's own bytes: a batch
// body of tens of MiB is then held once, as the request's body alone.
func (in *InvocationRequest) httpRequest(binding string, take bool) (HTTPRequestData, error) {
	raw, field, err := in.trigger(binding)
	if err != nil {
		return HTTPRequestData{}, err
	}
	m, err := objectFields(raw, field)
	if err != nil {
		return HTTPRequestData{}, err
	}
	var d HTTPRequestData
	if d.URL, err = flexString(member(m, "Url"), field+".Url"); err != nil {
		return d, err
	}
	if d.Method, err = flexString(member(m, "Method"), field+".Method"); err != nil {
		return d, err
	}
	d.Method = strings.ToUpper(strings.TrimSpace(d.Method))
	if d.Headers, err = decodeHeaders(member(m, "Headers"), field+".Headers"); err != nil {
		return d, err
	}
	if d.Query, err = decodeQuery(member(m, "Query"), field+".Query"); err != nil {
		return d, err
	}
	if len(d.Query) == 0 && d.URL != "" {
		if u, perr := url.Parse(d.URL); perr == nil {
			if q, qerr := url.ParseQuery(u.RawQuery); qerr == nil {
				d.Query = q
			}
		}
	}
	if d.Params, err = decodeParams(member(m, "Params"), field+".Params"); err != nil {
		return d, err
	}
	body := member(m, "Body")
	if take {
		in.release(field, m)
	}
	if d.Body, err = decodeBody(body, d.Headers.Get("Content-Type"), field+".Body", take); err != nil {
		return d, err
	}
	return d, nil
}

// decodeStrings reads a JSON value as a list of strings: an array of scalars, or one scalar.
func decodeStrings(raw json.RawMessage, field string) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, nil
	}
	if raw[0] != '[' {
		s, err := flexString(raw, field)
		if err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalid(field, "must be a string or an array of strings")
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		if isNull(it) {
			continue
		}
		s, err := flexString(it, field)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// sortedKeys makes decoding deterministic when two keys differ only in case.
func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func decodeHeaders(raw json.RawMessage, field string) (http.Header, error) {
	m, err := objectFields(raw, field)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	for _, k := range sortedKeys(m) {
		vals, err := decodeStrings(m[k], field+"."+k)
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			h.Add(k, v)
		}
	}
	return h, nil
}

func decodeQuery(raw json.RawMessage, field string) (url.Values, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return url.Values{}, nil
	}
	if raw[0] == '"' {
		s, err := flexString(raw, field)
		if err != nil {
			return nil, err
		}
		s = strings.TrimSpace(s)
		if !strings.HasPrefix(s, "{") {
			q, err := url.ParseQuery(strings.TrimPrefix(s, "?"))
			if err != nil {
				return nil, invalid(field, "is neither a JSON object nor a query string")
			}
			return q, nil
		}
	}
	m, err := objectFields(raw, field)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	for _, k := range sortedKeys(m) {
		if isNull(m[k]) {
			continue
		}
		vals, err := decodeStrings(m[k], field+"."+k)
		if err != nil {
			return nil, err
		}
		q[k] = append(q[k], vals...)
	}
	return q, nil
}

func decodeParams(raw json.RawMessage, field string) (map[string]string, error) {
	m, err := objectFields(raw, field)
	if err != nil {
		return nil, err
	}
	p := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) {
		if isNull(m[k]) {
			continue // an optional route parameter that was not given
		}
		s, err := flexString(m[k], field+"."+k)
		if err != nil {
			return nil, err
		}
		p[k] = s
	}
	return p, nil
}

// decodeBody applies the Body rule of the package documentation; inPlace unquotes a text body
// over raw's own bytes (jsonraw.UnquoteInPlace).
func decodeBody(raw json.RawMessage, contentType, field string, inPlace bool) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, invalid(field, "is not valid JSON")
	}
	if raw[0] != '"' {
		return compact(raw), nil
	}
	unquote := jsonraw.Unquote // one copy at most (encoding/json made a string, then []byte)
	if inPlace && !IsBinaryContentType(contentType) {
		unquote = jsonraw.UnquoteInPlace
	}
	text, ok := unquote(raw)
	if !ok {
		return nil, invalid(field, "is not a valid JSON string")
	}
	if !IsBinaryContentType(contentType) {
		return text, nil
	}
	b, err := decodeBase64(string(text))
	if err != nil {
		return nil, invalid(field, "must be base64 for Content-Type %q", truncate(contentType, 60))
	}
	return b, nil
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}

// IsBinaryContentType reports whether an invocation carries a body of this Content-Type as
// base64: every type except none, text/*, any type naming json or xml (application/json,
// application/problem+json, application/x-ndjson, image/svg+xml, ...), form-urlencoded and
// application/javascript.
func IsBinaryContentType(contentType string) bool {
	if strings.TrimSpace(contentType) == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
	}
	switch {
	case mt == "":
		return false
	case strings.HasPrefix(mt, "text/"),
		strings.Contains(mt, "json"), strings.Contains(mt, "xml"),
		mt == "application/x-www-form-urlencoded",
		mt == "application/javascript":
		return false
	}
	return true
}
