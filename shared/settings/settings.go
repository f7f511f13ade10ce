// Package settings reads settings through a lookup function, so only main touches the environment
// and tests pass a map. A Reader collects every problem and reports them together, each naming
// the setting at fault, so a misconfigured app fails at start with one clear message.
package settings

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Lookup returns a setting's value and whether it is set (os.LookupEnv fits).
type Lookup func(name string) (string, bool)

// MapLookup adapts a map for tests.
func MapLookup(m map[string]string) Lookup {
	return func(name string) (string, bool) { v, ok := m[name]; return v, ok }
}

// Reader reads typed settings and remembers what was wrong and what was read.
type Reader struct {
	lookup Lookup
	errs   []error
	seen   map[string]string // name -> value as printed (secrets masked)
}

// NewReader wraps a lookup function.
func NewReader(lookup Lookup) *Reader {
	return &Reader{lookup: lookup, seen: map[string]string{}}
}

func (r *Reader) get(name string) (string, bool) {
	v, ok := r.lookup(name)
	v = strings.TrimSpace(v)
	return v, ok && v != ""
}

func (r *Reader) fail(name, format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf("setting %s: %s", name, fmt.Sprintf(format, args...)))
}

func (r *Reader) note(name, value string, secret bool) {
	if secret && value != "" {
		value = "***"
	}
	r.seen[name] = value
}

// String is an optional setting with a default.
func (r *Reader) String(name, def string) string {
	v, ok := r.get(name)
	if !ok {
		v = def
	}
	r.note(name, v, false)
	return v
}

// Required is a setting that must be present.
func (r *Reader) Required(name string) string {
	v, ok := r.get(name)
	if !ok {
		r.fail(name, "is required")
	}
	r.note(name, v, false)
	return v
}

// Secret is a required setting whose value is never printed.
func (r *Reader) Secret(name string) string {
	v, ok := r.get(name)
	if !ok {
		r.fail(name, "is required")
	}
	r.note(name, v, true)
	return v
}

// OptionalSecret is a secret that may be absent.
func (r *Reader) OptionalSecret(name string) string {
	v, _ := r.get(name)
	r.note(name, v, true)
	return v
}

// Int is an integer setting within [min, max].
func (r *Reader) Int(name string, def, min, max int) int {
	v, ok := r.get(name)
	r.note(name, v, false)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		r.fail(name, "must be a whole number from %d to %d", min, max)
		return def
	}
	return n
}

// Bool is a true/false setting.
func (r *Reader) Bool(name string, def bool) bool {
	v, ok := r.get(name)
	r.note(name, v, false)
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.fail(name, "must be true or false")
		return def
	}
	return b
}

// Duration is a Go duration setting ("30s", "10m").
func (r *Reader) Duration(name string, def time.Duration) time.Duration {
	v, ok := r.get(name)
	r.note(name, v, false)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.fail(name, "must be a positive duration such as 30s or 10m")
		return def
	}
	return d
}

// URL is an absolute http(s) URL setting; empty stays empty unless required.
func (r *Reader) URL(name string, required bool) string {
	v, ok := r.get(name)
	r.note(name, v, false)
	if !ok {
		if required {
			r.fail(name, "is required")
		}
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		r.fail(name, "must be an absolute http(s) URL")
		return ""
	}
	return strings.TrimRight(v, "/")
}

// Enum is a setting restricted to the given values.
func (r *Reader) Enum(name, def string, allowed ...string) string {
	v := r.String(name, def)
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	r.fail(name, "must be one of %s", strings.Join(allowed, ", "))
	return def
}

// Base64Key is a required secret holding at least minBytes of base64 (standard or URL) data.
func (r *Reader) Base64Key(name string, minBytes int) []byte {
	v := r.Secret(name)
	if v == "" {
		return nil
	}
	b, err := DecodeBase64(v)
	if err != nil || len(b) < minBytes {
		r.fail(name, "must be base64 of at least %d bytes", minBytes)
		return nil
	}
	return b
}

// Check records a failure found by the caller's own validation of a setting.
func (r *Reader) Check(name string, err error) {
	if err != nil {
		r.fail(name, "%v", err)
	}
}

// Err is every problem found, joined; nil when the configuration is valid.
func (r *Reader) Err() error { return errors.Join(r.errs...) }

// Summary lists the settings read, secrets masked, sorted by name, for a start-up log line.
func (r *Reader) Summary() map[string]string {
	out := make(map[string]string, len(r.seen))
	names := make([]string, 0, len(r.seen))
	for n := range r.seen {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out[n] = r.seen[n]
	}
	return out
}

// DecodeBase64 accepts standard or URL alphabet, padded or not.
func DecodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}
