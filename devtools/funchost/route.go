package funchost

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// segment is one part of a route template.
type segment struct {
	literal     string // for literal segments
	param       string // parameter name, "" for literals
	optional    bool
	catchAll    bool
	def         string // default value ({name=value}), implies optional
	constraints []string
}

// route is a parsed route template (route prefix included).
type route struct {
	template string
	segs     []segment
}

// parseRoute parses an ASP.NET-style route template: literal segments, {name}, {name?} (last),
// {name=default}, {name:constraint} (guid, int, long, bool, alpha are checked; others are
// accepted and ignored) and {*rest} catch-all (last). A segment is either a literal or one
// parameter; mixed segments such as "file.{ext}" are rejected.
func parseRoute(tmpl string) (*route, error) {
	r := &route{template: tmpl}
	if tmpl == "" {
		return r, nil
	}
	parts := strings.Split(tmpl, "/")
	for i, p := range parts {
		last := i == len(parts)-1
		if p == "" {
			return nil, fmt.Errorf("route %q: empty segment", tmpl)
		}
		if !strings.ContainsAny(p, "{}") {
			r.segs = append(r.segs, segment{literal: p})
			continue
		}
		if !strings.HasPrefix(p, "{") || !strings.HasSuffix(p, "}") || strings.Count(p, "{") != 1 {
			return nil, fmt.Errorf("route %q: segment %q must be a literal or one {parameter}", tmpl, p)
		}
		body := p[1 : len(p)-1]
		var s segment
		if strings.HasPrefix(body, "*") {
			s.catchAll = true
			body = strings.TrimLeft(body, "*")
			if !last {
				return nil, fmt.Errorf("route %q: catch-all {*%s} must be the last segment", tmpl, body)
			}
		}
		if strings.HasSuffix(body, "?") {
			s.optional = true
			body = strings.TrimSuffix(body, "?")
		}
		if name, def, ok := strings.Cut(body, "="); ok {
			s.optional, s.def, body = true, def, name
		}
		pieces := strings.Split(body, ":")
		s.param = pieces[0]
		s.constraints = pieces[1:]
		if s.param == "" {
			return nil, fmt.Errorf("route %q: parameter without a name", tmpl)
		}
		if s.optional && !last {
			return nil, fmt.Errorf("route %q: optional parameter {%s?} must be the last segment", tmpl, s.param)
		}
		r.segs = append(r.segs, s)
	}
	return r, nil
}

var guidRe = regexp.MustCompile(`^(?i)\{?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\}?$`)
var alphaRe = regexp.MustCompile(`^[A-Za-z]+$`)

func satisfies(v string, constraints []string) bool {
	for _, c := range constraints {
		switch strings.ToLower(c) {
		case "guid":
			if !guidRe.MatchString(v) {
				return false
			}
		case "int":
			if _, err := strconv.ParseInt(v, 10, 32); err != nil {
				return false
			}
		case "long":
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				return false
			}
		case "bool":
			if l := strings.ToLower(v); l != "true" && l != "false" {
				return false
			}
		case "alpha":
			if !alphaRe.MatchString(v) {
				return false
			}
		}
	}
	return true
}

// match matches an escaped URL path (without leading slash, trailing slashes ignored) and
// returns the route values, unescaped.
func (r *route) match(escapedPath string) (map[string]string, bool) {
	escapedPath = strings.Trim(escapedPath, "/")
	var parts []string
	if escapedPath != "" {
		parts = strings.Split(escapedPath, "/")
	}
	vals := map[string]string{}
	for i, s := range r.segs {
		if i >= len(parts) {
			if s.param != "" && (s.optional || s.catchAll) {
				if s.def != "" {
					vals[s.param] = s.def
				}
				continue
			}
			return nil, false
		}
		if s.catchAll {
			rest, err := url.PathUnescape(strings.Join(parts[i:], "/"))
			if err != nil || !satisfies(rest, s.constraints) {
				return nil, false
			}
			vals[s.param] = rest
			return vals, true
		}
		v, err := url.PathUnescape(parts[i])
		if err != nil {
			return nil, false
		}
		if s.param == "" {
			if !strings.EqualFold(v, s.literal) {
				return nil, false
			}
			continue
		}
		if !satisfies(v, s.constraints) {
			return nil, false
		}
		vals[s.param] = v
	}
	if len(parts) > len(r.segs) {
		return nil, false
	}
	return vals, true
}

// precedence orders routes that match the same path as ASP.NET does: per segment, literal
// before constrained parameter before parameter before optional before catch-all, earlier
// segments first. The result compares lexically (smaller wins; a prefix beats its extensions).
func (r *route) precedence() string {
	var b strings.Builder
	for _, s := range r.segs {
		switch {
		case s.param == "":
			b.WriteByte('1')
		case s.catchAll:
			b.WriteByte('5')
		case s.optional:
			b.WriteByte('4')
		case len(s.constraints) > 0:
			b.WriteByte('2')
		default:
			b.WriteByte('3')
		}
	}
	return b.String()
}
