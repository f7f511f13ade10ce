package devtools

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMakeRunBuildsNothingUnderTests reads the Makefile's run target, its prerequisites and every
// script they run (scripts/run.sh, and what it runs in turn), and fails when a command there
// builds, runs or enters anything under tests/, or when a `go build`/`go run` names a package that
// does not exist (issue 23: the development runtime lives outside tests/). make token and make
// outbox, the dev tools next to a running make run, are held to the same.
func TestMakeRunBuildsNothingUnderTests(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"run", "token", "outbox"} {
		lines, err := closure(root, target)
		if err != nil {
			t.Fatal(err)
		}
		rep := check(root, lines)
		t.Logf("make %s: checked %v; go build/run: %v", target, rep.files, rep.packages)
		for _, p := range rep.problems {
			t.Errorf("make %s: %s", target, p)
		}
		if len(rep.packages) == 0 {
			t.Errorf("make %s builds or runs no Go package; the check saw nothing", target)
		}
		if target != "run" {
			continue
		}
		// The check must have seen what make run is: scripts/run.sh, and the local Functions
		// host built from its package here.
		if !slices.Contains(rep.files, "scripts/run.sh") {
			t.Errorf("make run's closure %v does not include scripts/run.sh", rep.files)
		}
		if !slices.Contains(rep.packages, "./devtools/funchost/cmd/funchost") {
			t.Errorf("make run builds %v; the local Functions host ./devtools/funchost/cmd/funchost is not among them", rep.packages)
		}
	}
}

// TestCheckFindsWhatItLooksFor runs the same check over small made-up Makefiles and scripts, so
// that the test above can fail: each case says which problems it must report.
func TestCheckFindsWhatItLooksFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		makefile string
		scripts  map[string]string
		want     []string // substrings, one per expected problem, in order
	}{
		{
			name:     "clean",
			makefile: "run: ## r\n\t@bash scripts/run.sh\n",
			scripts:  map[string]string{"scripts/run.sh": "#!/usr/bin/env bash\n# builds tests/x in a comment only\ngo build -o bin/h ./devtools/cmd/h\ncat <<MSG\nsee tests/e2e\nMSG\n"},
		},
		{
			name:     "go run under tests in the script",
			makefile: "run:\n\t@bash scripts/run.sh\n",
			scripts:  map[string]string{"scripts/run.sh": "go run ./tests/cmd/devsetup --dir .local\n"},
			want:     []string{"scripts/run.sh:1: ./tests/cmd/devsetup is under tests/", "scripts/run.sh:1: go run ./tests/cmd/devsetup: no Go package"},
		},
		{
			name:     "go build in the recipe, continued line, module path",
			makefile: "run:\n\tgo build \\\n\t  -o bin/h github.com/esign-svc/esign/tests/funchost/cmd/funchost\n",
			want:     []string{"Makefile:2: github.com/esign-svc/esign/tests/funchost/cmd/funchost is under tests/", "no Go package"},
		},
		{
			name:     "a package that does not exist",
			makefile: "run:\n\t@bash scripts/run.sh\n",
			scripts:  map[string]string{"scripts/run.sh": "set -e\ngo build -o bin/x ./devtools/cmd/missing && echo ok\n"},
			want:     []string{"scripts/run.sh:2: go build ./devtools/cmd/missing: no Go package"},
		},
		{
			name:     "a script run by the script, a prerequisite, a binary and a cd",
			makefile: "run: prep ## r\n\t@bash scripts/run.sh\nprep:\n\tcd tests && make x\n",
			scripts: map[string]string{
				"scripts/run.sh":   "bash \"$root/scripts/inner.sh\"\n",
				"scripts/inner.sh": "root=$(pwd)\n\"$root\"/tests/bin/host --listen x &\n",
			},
			want: []string{"Makefile:4: tests is under tests/", "scripts/inner.sh:2: $root/tests/bin/host is under tests/"},
		},
		{
			name:     "a script that is not there",
			makefile: "run:\n\t@bash scripts/gone.sh\n",
			want:     []string{"Makefile:2: runs scripts/gone.sh"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			write := func(name, text string) {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("Makefile", tc.makefile)
			for name, text := range tc.scripts {
				write(name, text)
			}
			write("devtools/cmd/h/main.go", "package main\n")
			lines, err := closure(root, "run")
			if err != nil {
				t.Fatal(err)
			}
			got := check(root, lines).problems
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

// cmdLine is one command line that make run executes, with where it comes from.
type cmdLine struct {
	file string // relative to the repository root
	line int
	text string
}

// closure returns the recipe lines of the Makefile's target and of its prerequisites, and the
// command lines of every script under scripts/ that those lines run, each script once.
func closure(root, target string) ([]cmdLine, error) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return nil, err
	}
	var out []cmdLine
	seenTargets := map[string]bool{}
	var addTarget func(string) error
	addTarget = func(name string) error {
		if seenTargets[name] {
			return nil
		}
		seenTargets[name] = true
		prereqs, recipe, ok := makeTarget(string(mk), name)
		if !ok {
			return fmt.Errorf("Makefile has no target %q", name)
		}
		for _, p := range prereqs {
			if err := addTarget(p); err != nil {
				return err
			}
		}
		out = append(out, recipe...)
		return nil
	}
	if err := addTarget(target); err != nil {
		return nil, err
	}
	seenScripts := map[string]bool{}
	for i := 0; i < len(out); i++ { // out grows as scripts are found
		for _, s := range scriptsRun(out[i].text) {
			if seenScripts[s] {
				continue
			}
			seenScripts[s] = true
			text, err := os.ReadFile(filepath.Join(root, s))
			if err != nil {
				continue // check reports it against the line that runs it
			}
			out = append(out, shellLines(s, string(text), 1)...)
		}
	}
	return out, nil
}

// makeTarget finds `name:` in a Makefile and returns its prerequisites and its recipe lines
// (tab-indented, with a leading @, - or + removed and continued lines joined).
func makeTarget(mk, name string) (prereqs []string, recipe []cmdLine, ok bool) {
	rule := regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `\s*:([^=].*)?$`)
	lines := strings.Split(mk, "\n")
	for i, l := range lines {
		m := rule.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		deps, _, _ := strings.Cut(m[1], "#")
		for _, d := range strings.Fields(deps) {
			if d != "|" {
				prereqs = append(prereqs, d)
			}
		}
		var body strings.Builder
		for j := i + 1; j < len(lines) && strings.HasPrefix(lines[j], "\t"); j++ {
			body.WriteString(lines[j])
			body.WriteString("\n")
		}
		for _, c := range shellLines("Makefile", body.String(), i+2) {
			c.text = strings.TrimLeft(c.text, "@-+ \t")
			recipe = append(recipe, c)
		}
		return prereqs, recipe, true
	}
	return nil, nil, false
}

var heredoc = regexp.MustCompile(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)

// shellLines splits shell text into command lines: continued lines joined, comments, blank lines
// and here-document bodies (text a command prints, not commands) left out. first is the line
// number of the text's first line.
func shellLines(file, text string, first int) []cmdLine {
	var out []cmdLine
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		start := i
		l := lines[i]
		for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, "\\") + " " + lines[i]
		}
		l = strings.TrimSpace(stripComment(l))
		if l == "" {
			continue
		}
		out = append(out, cmdLine{file: file, line: first + start, text: l})
		if m := heredoc.FindStringSubmatch(l); m != nil {
			for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != m[1] {
				i++
			}
			i++
		}
	}
	return out
}

// stripComment cuts a line at a # that starts a word outside quotes.
func stripComment(l string) string {
	var quote rune
	prev := ' '
	for i, r := range l {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (prev == ' ' || prev == '\t' || prev == ';'):
			return l[:i]
		}
		prev = r
	}
	return l
}

// words splits a command line into words, quotes removed and a command substitution's $( and )
// cut off; the operators ; && || | & are words of their own, so that a command's arguments end
// at them.
func words(l string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	inWord := false
	flush := func() {
		if inWord {
			out = append(out, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for _, r := range l {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote = r
			inWord = true
		case r == ' ' || r == '\t':
			flush()
		case r == ';' || r == '|' || r == '&':
			flush()
			out = append(out, string(r))
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	for i, w := range out {
		out[i] = strings.Trim(strings.TrimPrefix(w, "$("), "()")
	}
	return out
}

var scriptWord = regexp.MustCompile(`^(?:\$\{?root\}?/|\./)?(scripts/[A-Za-z0-9_.-]+\.sh)$`)

// scriptsRun returns the scripts under scripts/ that a command line names.
func scriptsRun(l string) []string {
	var out []string
	for _, w := range words(l) {
		if m := scriptWord.FindStringSubmatch(w); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// underTests says whether a word names a path or package under tests/.
func underTests(w string) bool {
	w = strings.TrimPrefix(w, "github.com/esign-svc/esign/")
	for _, p := range []string{"$root/", "${root}/", "./"} {
		w = strings.TrimPrefix(w, p)
	}
	return w == "tests" || strings.HasPrefix(w, "tests/")
}

type report struct {
	problems []string
	files    []string // the files the lines came from, in order
	packages []string // the packages go build and go run were given
}

// goFlagsWithValue are the go build/run flags whose value is the next word.
var goFlagsWithValue = map[string]bool{
	"-o": true, "-C": true, "-ldflags": true, "-gcflags": true, "-asmflags": true, "-tags": true,
	"-p": true, "-mod": true, "-modfile": true, "-overlay": true, "-pkgdir": true,
	"-toolexec": true, "-buildmode": true, "-compiler": true, "-installsuffix": true, "-pgo": true,
	"-coverpkg": true, "-covermode": true, "-exec": true,
}

func check(root string, lines []cmdLine) report {
	var rep report
	for _, c := range lines {
		if !slices.Contains(rep.files, c.file) {
			rep.files = append(rep.files, c.file)
		}
		at := fmt.Sprintf("%s:%d", c.file, c.line)
		ws := words(c.text)
		for _, w := range ws {
			if underTests(w) {
				rep.problems = append(rep.problems, fmt.Sprintf("%s: %s is under tests/ (%s)", at, w, c.text))
			}
		}
		for _, s := range scriptsRun(c.text) {
			if _, err := os.Stat(filepath.Join(root, s)); err != nil {
				rep.problems = append(rep.problems, fmt.Sprintf("%s: runs %s, which is not there", at, s))
			}
		}
		for i, w := range ws {
			if w != "go" || i+1 >= len(ws) {
				continue
			}
			dir := root
			j := i + 1
			for j+1 < len(ws) && ws[j] == "-C" {
				dir = filepath.Join(root, ws[j+1])
				j += 2
			}
			if j >= len(ws) || (ws[j] != "build" && ws[j] != "run" && ws[j] != "install") {
				continue
			}
			verb := ws[j]
			for k := j + 1; k < len(ws); k++ {
				a := ws[k]
				if a == ";" || a == "|" || a == "&" || strings.HasPrefix(a, ">") || strings.HasPrefix(a, "<") || strings.HasPrefix(a, "2>") {
					break
				}
				if strings.HasPrefix(a, "-") {
					if goFlagsWithValue[a] {
						k++
					}
					continue
				}
				rep.packages = append(rep.packages, a)
				if p := packageProblem(dir, root, a); p != "" {
					rep.problems = append(rep.problems, fmt.Sprintf("%s: go %s %s: %s", at, verb, a, p))
				}
				if verb == "run" {
					break // what follows is the program's arguments
				}
			}
		}
	}
	return rep
}

// packageProblem says what is wrong with a go build/run argument, or "" when it names a Go
// package (or file) in this repository, or a package elsewhere, or is built from a variable that
// only the script knows.
func packageProblem(dir, root, a string) string {
	if strings.Contains(a, "$") || strings.Contains(a, "@") {
		return ""
	}
	var p string
	switch {
	case strings.HasPrefix(a, "github.com/esign-svc/esign/"):
		p = filepath.Join(root, strings.TrimPrefix(a, "github.com/esign-svc/esign/"))
	case strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") || a == ".":
		p = filepath.Join(dir, a)
	default:
		return "" // the standard library or another module
	}
	if strings.HasSuffix(p, ".go") {
		if _, err := os.Stat(p); err != nil {
			return "no such Go file"
		}
		return ""
	}
	ents, err := os.ReadDir(p)
	if err == nil {
		for _, e := range ents {
			if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				return ""
			}
		}
	}
	return "no Go package there"
}
