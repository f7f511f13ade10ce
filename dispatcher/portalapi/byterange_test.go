package portalapi

import "testing"

func TestParseRange(t *testing.T) {
	t.Parallel()
	const size = 100
	cases := []struct {
		header        string
		start, length int64
		ok, unsat     bool
	}{
		{"", 0, 0, false, false},
		{"bytes=0-9", 0, 10, true, false},
		{"bytes=90-", 90, 10, true, false},
		{"bytes=90-200", 90, 10, true, false},
		{"bytes=-10", 90, 10, true, false},
		{"bytes=-1000", 0, 100, true, false},
		{"bytes=99-99", 99, 1, true, false},
		{"bytes=100-", 0, 0, false, true},
		{"bytes=-0", 0, 0, false, true},
		{"bytes=5-1", 0, 0, false, false},
		{"bytes=0-1,5-6", 0, 0, false, false},
		{"items=0-1", 0, 0, false, false},
		{"bytes=a-b", 0, 0, false, false},
		{"bytes=-", 0, 0, false, false},
		{"bytes=-5-", 0, 0, false, false},
	}
	for _, tc := range cases {
		r, ok, unsat := parseRange(tc.header, size)
		if ok != tc.ok || unsat != tc.unsat || (ok && (r.start != tc.start || r.length != tc.length)) {
			t.Errorf("%q: %+v ok=%v unsat=%v", tc.header, r, ok, unsat)
		}
	}
}

// FuzzParseRange: any header gives either the whole resource, a 416, or a range inside it.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"bytes=0-9", "bytes=-5", "bytes=9223372036854775807-", "bytes=1-0", "bytes=,", "bytes=0-9223372036854775807"} {
		f.Add(s, int64(100))
	}
	f.Fuzz(func(t *testing.T, header string, size int64) {
		if size < 0 {
			return
		}
		r, ok, unsat := parseRange(header, size)
		if ok && unsat {
			t.Fatal("both a range and unsatisfiable")
		}
		if ok && (r.start < 0 || r.length <= 0 || r.start+r.length > size) {
			t.Fatalf("%q on %d: range %+v outside the resource", header, size, r)
		}
	})
}
