package funchost

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// schedule is a timer trigger's schedule: a six-field NCRONTAB expression
// ("sec min hour day month day-of-week") evaluated in UTC, or a fixed interval written as a
// TimeSpan ("00:05:00"), which the real host accepts on dedicated plans.
type schedule struct {
	expr     string
	fields   [6]uint64 // bit sets: sec, min, hour, day-of-month, month, day-of-week
	interval time.Duration
}

var cronFields = [6]struct {
	name     string
	min, max int
	names    []string
}{
	{"second", 0, 59, nil},
	{"minute", 0, 59, nil},
	{"hour", 0, 23, nil},
	{"day", 1, 31, nil},
	{"month", 1, 12, []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{"day-of-week", 0, 6, []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

// parseSchedule parses "sec min hour day month dow": each field is "*", a value, a range
// "a-b", a step "*/n" or "a-b/n" or "a/n", or a comma list of those. Months and days of the
// week also take three-letter English names; day-of-week 7 means Sunday.
func parseSchedule(expr string) (*schedule, error) {
	expr = strings.TrimSpace(expr)
	if strings.Contains(expr, ":") {
		d, err := parseTimeSpan(expr)
		if err != nil {
			return nil, err
		}
		if d <= 0 {
			return nil, fmt.Errorf("interval %q must be positive", expr)
		}
		return &schedule{expr: expr, interval: d}, nil
	}
	parts := strings.Fields(expr)
	if len(parts) != 6 {
		return nil, fmt.Errorf("%q: want six fields (second minute hour day month day-of-week), got %d", expr, len(parts))
	}
	s := &schedule{expr: expr}
	for i, p := range parts {
		bits, err := parseCronField(p, i)
		if err != nil {
			return nil, fmt.Errorf("%q: %s field %q: %w", expr, cronFields[i].name, p, err)
		}
		s.fields[i] = bits
	}
	return s, nil
}

func parseCronField(f string, idx int) (uint64, error) {
	spec := cronFields[idx]
	var bits uint64
	for _, item := range strings.Split(f, ",") {
		rng, stepS, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepS)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("bad step %q", stepS)
			}
			step = n
		}
		lo, hi := spec.min, spec.max
		switch {
		case rng == "*" || rng == "?":
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			var err error
			if lo, err = cronValue(a, idx); err != nil {
				return 0, err
			}
			if hi, err = cronValue(b, idx); err != nil {
				return 0, err
			}
			if lo > hi {
				return 0, fmt.Errorf("range %q runs backwards", rng)
			}
		default:
			v, err := cronValue(rng, idx)
			if err != nil {
				return 0, err
			}
			lo, hi = v, v
			if hasStep {
				hi = spec.max
			}
		}
		for v := lo; v <= hi; v += step {
			n := v
			if idx == 5 && n == 7 {
				n = 0
			}
			bits |= 1 << uint(n)
		}
	}
	return bits, nil
}

func cronValue(s string, idx int) (int, error) {
	spec := cronFields[idx]
	for i, n := range spec.names {
		if strings.EqualFold(s, n) {
			return spec.min + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("bad value %q", s)
	}
	max := spec.max
	if idx == 5 {
		max = 7
	}
	if v < spec.min || v > max {
		return 0, fmt.Errorf("value %d out of range %d-%d", v, spec.min, max)
	}
	return v, nil
}

// next returns the first occurrence strictly after t, in UTC. It returns the zero time when
// the expression never fires (e.g. 30 February) within the next eight years.
func (s *schedule) next(t time.Time) time.Time {
	t = t.UTC()
	if s.interval > 0 {
		return t.Add(s.interval)
	}
	t = t.Truncate(time.Second).Add(time.Second)
	limit := t.AddDate(8, 0, 0)
	for t.Before(limit) {
		if !has(s.fields[4], int(t.Month())) {
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if !s.dayMatches(t) {
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if !has(s.fields[2], t.Hour()) {
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour()+1, 0, 0, 0, time.UTC)
			continue
		}
		if !has(s.fields[1], t.Minute()) {
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute()+1, 0, 0, time.UTC)
			continue
		}
		if !has(s.fields[0], t.Second()) {
			t = t.Add(time.Second)
			continue
		}
		return t
	}
	return time.Time{}
}

// dayMatches requires both the day of month and the day of week to match, as NCrontab (the
// library the real host uses) does; unlike Unix cron, restricting both does not mean "either".
func (s *schedule) dayMatches(t time.Time) bool {
	return has(s.fields[3], t.Day()) && has(s.fields[5], int(t.Weekday()))
}

func has(bits uint64, v int) bool { return bits&(1<<uint(v)) != 0 }
