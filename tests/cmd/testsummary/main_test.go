package main

import (
	"strings"
	"testing"
)

func TestRunCountsAndFails(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, want string
		code           int
	}{
		{"all pass", `{"Action":"pass","Package":"p","Test":"A"}
{"Action":"pass","Package":"p","Test":"B"}
{"Action":"skip","Package":"p","Test":"C"}
{"Action":"pass","Package":"p","Elapsed":0.1}`, "2 passed, 0 failed, 1 skipped", 0},
		{"one fails with output", `{"Action":"output","Package":"p","Test":"A","Output":"boom\n"}
{"Action":"fail","Package":"p","Test":"A"}
{"Action":"fail","Package":"p"}`, "0 passed, 1 failed, 0 skipped", 1},
		{"build failure", `{"Action":"build-output","ImportPath":"p","Output":"x.go:1: bad\n"}
{"Action":"build-fail","ImportPath":"p"}`, "0 passed, 0 failed, 0 skipped", 1},
		{"nothing ran", ``, "0 passed, 0 failed, 0 skipped", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			code := run(strings.NewReader(c.in), &out)
			if code != c.code || !strings.Contains(out.String(), c.want) {
				t.Errorf("code %d, output:\n%s\nwant code %d and %q", code, out.String(), c.code, c.want)
			}
			if c.name == "one fails with output" && !strings.Contains(out.String(), "boom") {
				t.Errorf("failed test's output not shown")
			}
		})
	}
}
