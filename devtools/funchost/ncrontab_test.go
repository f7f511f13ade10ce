package funchost

import (
	"testing"
	"time"
)

func TestScheduleNext(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) // a Sunday
	tests := []struct {
		expr string
		from time.Time
		want time.Time
	}{
		{"0 */5 * * * *", base, base.Add(5 * time.Minute)},
		{"0 */5 * * * *", base.Add(7*time.Minute + 30*time.Second), base.Add(10 * time.Minute)},
		{"*/10 * * * * *", base.Add(3 * time.Second), base.Add(10 * time.Second)},
		{"* * * * * *", base.Add(500 * time.Millisecond), base.Add(time.Second)},
		{"0 0 * * * *", base, base.Add(time.Hour)},
		{"30 15 10 * * *", base, base.Add(15*time.Minute + 30*time.Second)},
		{"0 0 2 * * *", base, time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)},
		{"0 0 9-17/4 * * *", base, time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)},
		{"0 0,30 9,18 * * *", base, time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC)},
		{"0 0 0 * * 1-5", base, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
		{"0 0 0 * * mon", base, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
		{"0 0 0 * * 7", base, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)},
		{"0 0 0 1 * *", base, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"0 0 0 1 jan *", base, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"0 0 0 29 2 *", base, time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"0 0 0 31 * *", base, time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)},
		// NCrontab needs both day fields: the 1st that is a Monday.
		{"0 0 0 1 * 1", base, time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)},
		{"0 5/20 * * * *", base, base.Add(5 * time.Minute)},
		{"0 0 0 30 2 *", base, time.Time{}},
		{"00:05:00", base, base.Add(5 * time.Minute)},
		// Input in another zone is read in UTC.
		{"0 0 12 * * *", time.Date(2026, 11, 22, 11, 0, 0, 0, time.FixedZone("X", 3600)), time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		t.Run(tc.expr+"@"+tc.from.Format(time.RFC3339), func(t *testing.T) {
			t.Parallel()
			s, err := parseSchedule(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.next(tc.from); !got.Equal(tc.want) {
				t.Errorf("next(%s) = %s, want %s", tc.from, got, tc.want)
			}
		})
	}
}

func TestScheduleParseErrors(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		"", "* * * * *", "* * * * * * *", "60 * * * * *", "* 60 * * * *", "* * 24 * * *",
		"* * * 0 * *", "* * * 32 * *", "* * * * 13 *", "* * * * * 8", "*/0 * * * * *",
		"5-1 * * * * *", "a * * * * *", "1-x * * * * *", "00:00:00", "1:2:3:4",
	} {
		t.Run(expr, func(t *testing.T) {
			t.Parallel()
			if _, err := parseSchedule(expr); err == nil {
				t.Errorf("parseSchedule(%q) gave no error", expr)
			}
		})
	}
}

func TestParseTimeSpan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"00:00:01", time.Second, true},
		{"00:10:00", 10 * time.Minute, true},
		{"1.02:00:00", 26 * time.Hour, true},
		{"00:00:00.250", 250 * time.Millisecond, true},
		{"2", 48 * time.Hour, true},
		{"00:61:00", 0, false},
		{"x", 0, false},
		{"", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := parseTimeSpan(tc.in)
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("parseTimeSpan(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
			}
		})
	}
}
