package funchost

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// invokeHTTP runs an HTTP-triggered function as an invocation and maps Outputs.res (or the
// ReturnValue for a "$return" binding) to the response. A failed invocation answers 500 with an
// empty body. A body over Options.MaxInvocationBody is 413: http.MaxBytesReader, given the
// server's own ResponseWriter, makes net/http answer it with Connection: close and close the
// connection, so the rest of the body is never read as a request.
func (h *Host) invokeHTTP(w http.ResponseWriter, r *http.Request, f *function, params map[string]string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxInvocationBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	id := newGUID()
	data, meta := h.httpRequestData(r, body, params, f.trigger.Name)
	rep, err := h.invoke(r.Context(), f, id, data, meta, fmt.Sprintf("HTTP %s %s", r.Method, f.route.template))
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	var res json.RawMessage
	if f.httpOut == "$return" {
		res = rep.ReturnValue
	} else if f.httpOut != "" {
		res, _ = lookupOutput(rep.Outputs, f.httpOut)
	}
	if err := writeRes(w, res); err != nil {
		h.log.printf("[fn=%s id=%s] bad %s output: %v", f.name, id, f.httpOut, err)
		w.WriteHeader(http.StatusInternalServerError)
	}
}

// httpRequestData builds Data and Metadata for an HTTP trigger in the configured shape.
func (h *Host) httpRequestData(r *http.Request, body []byte, params map[string]string, binding string) (map[string]any, map[string]any) {
	query := map[string]string{}
	for k, v := range r.URL.Query() {
		query[k] = strings.Join(v, ",")
	}
	headers := map[string][]string{}
	flat := map[string]string{}
	for k, v := range r.Header {
		headers[k] = v
		flat[k] = strings.Join(v, ", ")
	}
	if r.Host != "" {
		headers["Host"] = []string{r.Host}
		flat["Host"] = r.Host
	}
	if params == nil {
		params = map[string]string{}
	}
	u := "http://" + r.Host + r.URL.RequestURI()
	req := map[string]any{
		"Url": u, "Method": strings.ToUpper(r.Method), "Headers": headers,
		"Params": params, "Body": requestBody(r.Header.Get("Content-Type"), body),
	}
	meta := map[string]any{"Headers": flat}
	for k, v := range params {
		meta[k] = v
	}
	if h.opts.Shape == ShapeDocumented {
		req["Query"] = query
		meta["Query"] = query
	} else {
		q, _ := json.Marshal(query)
		req["Query"] = string(q)
		meta["Query"] = string(q)
		req["Identities"] = []any{}
	}
	return map[string]any{binding: req}, meta
}

// requestBody is the body as text for text, JSON, XML and form content types (and for
// untyped UTF-8 bodies), base64 otherwise.
func requestBody(contentType string, body []byte) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	mt = strings.ToLower(mt)
	switch {
	case strings.HasPrefix(mt, "text/"), strings.Contains(mt, "json"), strings.Contains(mt, "xml"),
		mt == "application/x-www-form-urlencoded", mt == "" && utf8.Valid(body):
		return string(body)
	}
	return base64.StdEncoding.EncodeToString(body)
}

// writeRes writes an http output: {"statusCode": 201 or "201", "headers": {...}, "body": ...}.
// A string body is written as is; an object or array body as JSON (Content-Type
// application/json unless set); a missing res gives 200 with an empty body.
// Errors: res is not an object, or statusCode is not a number in 100..599.
func writeRes(w http.ResponseWriter, raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		w.WriteHeader(http.StatusOK)
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("want an object: %w", err)
	}
	get := func(names ...string) json.RawMessage {
		for k, v := range fields {
			for _, n := range names {
				if strings.EqualFold(k, n) {
					return v
				}
			}
		}
		return nil
	}
	status := http.StatusOK
	if sc := get("statusCode", "status"); len(sc) > 0 && string(sc) != "null" {
		var n json.Number
		var s string
		if json.Unmarshal(sc, &s) == nil {
			n = json.Number(strings.TrimSpace(s))
		} else if err := json.Unmarshal(sc, &n); err != nil {
			return fmt.Errorf("statusCode %s: want a number", sc)
		}
		v, err := strconv.Atoi(string(n))
		if err != nil || v < 100 || v > 599 {
			return fmt.Errorf("statusCode %s: want 100..599", sc)
		}
		status = v
	}
	if hs := get("headers"); len(hs) > 0 && string(hs) != "null" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(hs, &m); err != nil {
			return fmt.Errorf("headers: want an object: %w", err)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, v := range headerValues(m[k]) {
				w.Header().Add(k, v)
			}
		}
	}
	var out []byte
	if b := bytes.TrimSpace(get("body")); len(b) > 0 && string(b) != "null" {
		switch b[0] {
		case '"':
			var s string
			if err := json.Unmarshal(b, &s); err != nil {
				return fmt.Errorf("body: %w", err)
			}
			out = []byte(s)
		case '{', '[':
			out = b
			if w.Header().Get("Content-Type") == "" {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
			}
		default:
			out = b
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(status)
	_, _ = w.Write(out)
	return nil
}

func headerValues(raw json.RawMessage) []string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	return []string{string(bytes.TrimSpace(raw))}
}
