// Command testsummary reads `go test -json` on standard input, prints each package's result,
// the full output of every failed test, and closes with one counted line
// "N passed, N failed, N skipped". It exits 1 when anything failed or did not build, and when no
// test ran at all.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout))
}

func run(in io.Reader, out io.Writer) int {
	var passed, failed, skipped, brokenPkgs int
	outputs := map[string]*strings.Builder{} // package/test -> output
	var failedNames []string
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintln(out, string(line)) // build errors and other plain text
			continue
		}
		key := ev.Package + " " + ev.Test
		switch ev.Action {
		case "output", "build-output":
			b := outputs[key]
			if b == nil {
				b = &strings.Builder{}
				outputs[key] = b
			}
			if b.Len() < 64*1024 {
				b.WriteString(ev.Output)
			}
		case "build-fail":
			brokenPkgs++
		case "pass":
			if ev.Test != "" {
				passed++
			} else {
				fmt.Fprintf(out, "ok   %s %.1fs\n", ev.Package, ev.Elapsed)
			}
			delete(outputs, key)
		case "skip":
			if ev.Test != "" {
				skipped++
			}
			delete(outputs, key)
		case "fail":
			if ev.Test != "" {
				failed++
				failedNames = append(failedNames, key)
				fmt.Fprintf(out, "--- FAIL %s %s\n%s", ev.Package, ev.Test, text(outputs[key]))
			} else {
				brokenPkgs++
				fmt.Fprintf(out, "FAIL %s %.1fs\n%s", ev.Package, ev.Elapsed, text(outputs[key]))
			}
		}
	}
	if len(failedNames) > 0 {
		sort.Strings(failedNames)
		fmt.Fprintf(out, "\nfailed tests:\n  %s\n", strings.Join(failedNames, "\n  "))
	}
	fmt.Fprintf(out, "\n%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	switch {
	case failed > 0 || brokenPkgs > 0:
		return 1
	case passed == 0:
		fmt.Fprintln(out, "no test ran")
		return 1
	}
	return 0
}

func text(b *strings.Builder) string {
	if b == nil {
		return ""
	}
	return b.String()
}
