package funchost

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseTimeSpan reads a .NET TimeSpan as host.json writes it: "hh:mm:ss", "d.hh:mm:ss",
// "hh:mm:ss.fff" (fraction of a second) or "d" (whole days).
func parseTimeSpan(s string) (time.Duration, error) {
	orig := s
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return 0, fmt.Errorf("empty time span")
	}
	if !strings.Contains(s, ":") {
		days, err := strconv.Atoi(s)
		if err != nil || days < 0 {
			return 0, fmt.Errorf("time span %q: want [d.]hh:mm:ss[.fff]", orig)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	var days int
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("time span %q: want [d.]hh:mm:ss[.fff]", orig)
	}
	if d, h, ok := strings.Cut(parts[0], "."); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("time span %q: bad days", orig)
		}
		days, parts[0] = n, h
	}
	hours, err := strconv.Atoi(parts[0])
	if err != nil || hours < 0 || hours > 23 {
		return 0, fmt.Errorf("time span %q: bad hours", orig)
	}
	mins, err := strconv.Atoi(parts[1])
	if err != nil || mins < 0 || mins > 59 {
		return 0, fmt.Errorf("time span %q: bad minutes", orig)
	}
	var secs float64
	if len(parts) == 3 {
		secs, err = strconv.ParseFloat(parts[2], 64)
		if err != nil || secs < 0 || secs >= 60 {
			return 0, fmt.Errorf("time span %q: bad seconds", orig)
		}
	}
	d := time.Duration(days)*24*time.Hour + time.Duration(hours)*time.Hour +
		time.Duration(mins)*time.Minute + time.Duration(secs*float64(time.Second))
	if neg {
		d = -d
	}
	return d, nil
}

// timeSpan is a host.json duration: a TimeSpan string, or a number of milliseconds (the older
// host.json form, e.g. "maxPollingInterval": 2000).
type timeSpan struct {
	d   time.Duration
	set bool
}

func (t *timeSpan) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		d, err := parseTimeSpan(s)
		if err != nil {
			return err
		}
		t.d, t.set = d, true
		return nil
	}
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return fmt.Errorf("time span: want a \"hh:mm:ss\" string or milliseconds, got %s", b)
	}
	t.d, t.set = time.Duration(ms*float64(time.Millisecond)), true
	return nil
}

func (t timeSpan) or(def time.Duration) time.Duration {
	if t.set {
		return t.d
	}
	return def
}
