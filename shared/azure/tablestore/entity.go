package tablestore

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Entity is one table row.
//
// Property values and how they are stored (and come back from Get and Query):
//
//	string              Edm.String
//	bool                Edm.Boolean
//	int32               Edm.Int32   -> int32
//	int, int64          Edm.Int64   -> int64 (annotated "@odata.type": "Edm.Int64"; the JSON
//	                                   value is a string, so no precision is lost)
//	float64             Edm.Double  -> float64 (annotated). Azurite drops the annotation of
//	                                   whole doubles: 3.0 reads back as int32(3) there, so
//	                                   read doubles with Entity.Float64, which accepts both.
//	time.Time           Edm.DateTime -> time.Time in UTC, truncated to the service's 100 ns;
//	                                   a zero time.Time is not stored (it reads back as absent)
//	[]byte              Edm.Binary  -> []byte
//	nil                 not stored
//
// Any other type is refused with an error before anything is sent. A property written by
// another tool without annotation reads back by its JSON type: whole numbers that fit int32 as
// int32, other numbers as float64.
type Entity struct {
	PartitionKey string
	RowKey       string
	// ETag is filled by Get and Query; Replace, Merge and conditional Delete send it as If-Match.
	ETag string
	// Timestamp is the service's last-modified time; it is read-only.
	Timestamp time.Time
	Props     map[string]any
}

// minDateTime is the earliest Edm.DateTime the service accepts.
var minDateTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)

// marshal is the JSON body for the service, with @odata.type annotations. It checks keys,
// property names, value types and the size limits first.
func (e Entity) marshal() ([]byte, error) {
	if err := checkKey("PartitionKey", e.PartitionKey); err != nil {
		return nil, err
	}
	if err := checkKey("RowKey", e.RowKey); err != nil {
		return nil, err
	}
	m := make(map[string]any, 2+2*len(e.Props))
	m["PartitionKey"], m["RowKey"] = e.PartitionKey, e.RowKey
	size := entityOverhead(e.PartitionKey, e.RowKey)
	for name, v := range e.Props {
		if err := checkPropertyName(name); err != nil {
			return nil, err
		}
		var typ string
		var vs int // stored size of the value
		switch v := v.(type) {
		case nil:
			continue
		case string:
			if err := checkString(name, v); err != nil {
				return nil, err
			}
			m[name], vs = v, 4+utf16Len(v)*2
		case bool:
			m[name], vs = v, 1
		case int32:
			m[name], vs = v, 4
		case int:
			m[name], typ, vs = strconv.FormatInt(int64(v), 10), "Edm.Int64", 8
		case int64:
			m[name], typ, vs = strconv.FormatInt(v, 10), "Edm.Int64", 8
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("tablestore: property %q: NaN and infinities are not stored", name)
			}
			m[name], typ, vs = v, "Edm.Double", 8
		case time.Time:
			if v.IsZero() {
				continue
			}
			if v.Before(minDateTime) {
				return nil, fmt.Errorf("tablestore: property %q: times before 1601 cannot be stored", name)
			}
			m[name], typ, vs = v.UTC().Truncate(100*time.Nanosecond).Format(time.RFC3339Nano), "Edm.DateTime", 8
		case []byte:
			if err := checkBinary(name, v); err != nil {
				return nil, err
			}
			m[name], typ, vs = base64.StdEncoding.EncodeToString(v), "Edm.Binary", 4+len(v)
		default:
			return nil, fmt.Errorf("tablestore: property %q has unsupported type %T (use string, bool, int32, int, int64, float64, time.Time or []byte)", name, v)
		}
		if typ != "" {
			m[name+"@odata.type"] = typ
		}
		size += 8 + utf16Len(name)*2 + vs
	}
	if len(e.Props) > MaxProperties {
		return nil, tooLarge(CodeEntityTooLarge, "an entity holds at most %d properties, got %d", MaxProperties, len(e.Props))
	}
	if size > MaxEntityBytes {
		return nil, tooLarge(CodeEntityTooLarge, "the entity is about %d bytes; the limit is %d", size, MaxEntityBytes)
	}
	return json.Marshal(m)
}

// parseEntity reads the service's JSON (minimal metadata) into an Entity with typed values.
func parseEntity(b []byte, etag string) (Entity, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return Entity{}, fmt.Errorf("tablestore: decode entity: %w", err)
	}
	e := Entity{ETag: etag, Props: map[string]any{}}
	e.PartitionKey, _ = raw["PartitionKey"].(string)
	e.RowKey, _ = raw["RowKey"].(string)
	if e.ETag == "" {
		e.ETag, _ = raw["odata.etag"].(string)
	}
	if ts, ok := raw["Timestamp"].(string); ok {
		e.Timestamp, _ = time.Parse(time.RFC3339Nano, ts)
	}
	for name, v := range raw {
		if name == "PartitionKey" || name == "RowKey" || name == "Timestamp" ||
			strings.HasPrefix(name, "odata.") || strings.Contains(name, "@odata.") {
			continue
		}
		typ, _ := raw[name+"@odata.type"].(string)
		val, err := typedValue(typ, v)
		if err != nil {
			return Entity{}, fmt.Errorf("tablestore: property %q: %w", name, err)
		}
		e.Props[name] = val
	}
	return e, nil
}

func typedValue(typ string, v any) (any, error) {
	s, isString := v.(string)
	switch typ {
	case "Edm.Int64":
		if n, ok := v.(json.Number); ok {
			return n.Int64()
		}
		return strconv.ParseInt(s, 10, 64)
	case "Edm.DateTime":
		t, err := time.Parse(time.RFC3339Nano, s)
		return t.UTC(), err
	case "Edm.Binary":
		return base64.StdEncoding.DecodeString(s)
	case "Edm.Double":
		if isString { // "NaN", "Infinity", "-Infinity" or a number in a string
			return strconv.ParseFloat(strings.Replace(s, "Infinity", "Inf", 1), 64)
		}
		if n, ok := v.(json.Number); ok {
			return n.Float64()
		}
	case "Edm.Guid", "Edm.String":
		return s, nil
	case "Edm.Boolean":
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case "Edm.Int32":
		if n, ok := v.(json.Number); ok {
			i, err := strconv.ParseInt(n.String(), 10, 32)
			return int32(i), err
		}
	case "":
		if n, ok := v.(json.Number); ok {
			if i, err := strconv.ParseInt(n.String(), 10, 32); err == nil {
				return int32(i), nil
			}
			return n.Float64()
		}
		return v, nil // string, bool
	}
	return nil, fmt.Errorf("unexpected %s value %v", typ, v)
}

// String returns the string property name, or "" when it is absent or not a string.
func (e Entity) String(name string) string { s, _ := e.Props[name].(string); return s }

// Int64 returns an integer property (Int64 or Int32) as int64, or 0.
func (e Entity) Int64(name string) int64 {
	switch v := e.Props[name].(type) {
	case int64:
		return v
	case int32:
		return int64(v)
	}
	return 0
}

// Bool returns a boolean property, or false.
func (e Entity) Bool(name string) bool { b, _ := e.Props[name].(bool); return b }

// Time returns a time property, or the zero time.
func (e Entity) Time(name string) time.Time { t, _ := e.Props[name].(time.Time); return t }

// Float64 returns a numeric property as float64 (a whole double may come back as an integer
// from Azurite), or 0.
func (e Entity) Float64(name string) float64 {
	switch v := e.Props[name].(type) {
	case float64:
		return v
	case int32:
		return float64(v)
	case int64:
		return float64(v)
	}
	return 0
}

// Bytes returns a binary property, or nil.
func (e Entity) Bytes(name string) []byte { b, _ := e.Props[name].([]byte); return b }
