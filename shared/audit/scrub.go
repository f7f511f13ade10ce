package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/tablestore"
)

// Scrub cuts s out of every string an audit row holds: its properties and, inside its data
// JSON, every key and string value at any depth (erasure: an e-mail hash must survive nowhere
// in the trail, whichever event carried it and however). It answers the properties to merge
// into the row (only those that change) and nil when nothing holds s. An empty s changes
// nothing. Errors: ErrCorrupt (naming the row) when the data JSON does not decode.
func Scrub(e tablestore.Entity, s string) (map[string]any, error) {
	if s == "" {
		return nil, nil
	}
	var out map[string]any
	for k, v := range e.Props {
		str, ok := v.(string)
		if !ok || !strings.Contains(str, s) {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		if k != "data" {
			out[k] = strings.ReplaceAll(str, s, "")
			continue
		}
		d, err := scrubJSON(str, s)
		if err != nil {
			return nil, apperr.Wrap(fmt.Errorf("audit row %s/%s data: %w", e.PartitionKey, e.RowKey, err),
				ErrCorrupt.Kind, ErrCorrupt.Code, "%s", ErrCorrupt.Detail)
		}
		out[k] = d
	}
	return out, nil
}

// scrubJSON decodes a data object, cuts s out of its keys and strings and encodes it again as
// Entity does (keys sorted), without escaping <, > and &; numbers keep their text.
func scrubJSON(data, s string) (string, error) {
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cut(v, s)); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func cut(v any, s string) any {
	switch t := v.(type) {
	case string:
		return strings.ReplaceAll(t, s, "")
	case []any:
		for i := range t {
			t[i] = cut(t[i], s)
		}
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[strings.ReplaceAll(k, s, "")] = cut(x, s)
		}
		return out
	}
	return v
}
