package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestProblem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		line     string // wanted Problem(in, Line), as a substring; "" for none
		lines    string // wanted Problem(in, Lines)
	}{
		{"empty", "", "", ""},
		{"latin", "Anna Müller-Lüdenscheidt", "", ""},
		{"arabic with marks", "\u200fمحمد\u200e (ZWNJ\u200c)", "", ""},
		{"emoji with joiner", "👩\u200d💻 Q&A <b>", "", ""},
		{"replacement char is text", "a\uFFFDb", "", ""},
		{"NUL", "a\x00b", "U+0000 (character 2)", "U+0000 (character 2)"},
		{"BEL", "\a", "the control character U+0007", "the control character U+0007"},
		{"ESC", "x\x1b[31m", "U+001B", "U+001B"},
		{"tab", "a\tb", "U+0009", "U+0009"},
		{"DEL", "a\x7f", "U+007F", "U+007F"},
		{"NEL", "a\u0085b", "U+0085", "U+0085"},
		{"CSI", "\u009b", "U+009B (character 1)", "U+009B"},
		{"last C1", "\u009f", "U+009F", "U+009F"},
		{"first after C1", "\u00a0nbsp", "", ""},
		{"LF", "a\nb", "one line: a line break at character 2", ""},
		{"CRLF", "a\r\nb\r\n", "line break at character 2", ""},
		{"lone CR", "a\rb", "line break", "lone carriage return at character 2"},
		{"CR at end", "ab\r", "line break", "lone carriage return at character 3"},
		{"CR CR LF", "a\r\r\n", "line break", "lone carriage return at character 2"},
		{"line separator", "a\u2028b", "the line or paragraph separator U+2028", "U+2028"},
		{"paragraph separator", "\u2029", "U+2029", "U+2029"},
		{"LRE", "\u202a", "the bidirectional formatting character U+202A", "U+202A"},
		{"RLO", "evil\u202egnp.exe", "U+202E (character 5)", "U+202E"},
		{"LRI", "\u2066x", "U+2066", "U+2066"},
		{"PDI", "x\u2069", "U+2069", "U+2069"},
		{"next to bidi", "\u2065\u206a\u202f\u2027", "", ""},
		{"invalid byte", "ab\xff", "not valid UTF-8 (byte 3)", "not valid UTF-8 (byte 3)"},
		{"truncated sequence", "\xe2\x80", "not valid UTF-8 (byte 1)", "not valid UTF-8"},
		{"encoded surrogate", "\xed\xa0\x80", "not valid UTF-8", "not valid UTF-8"},
		{"multibyte position", "ééé\u0007", "(character 4)", "(character 4)"},
	}
	for _, c := range cases {
		for _, f := range []struct {
			form Form
			want string
		}{{Line, c.line}, {Lines, c.lines}} {
			got := Problem(c.in, f.form)
			if (f.want == "") != (got == "") || !strings.Contains(got, f.want) {
				t.Errorf("%s: Problem(%q, %d) = %q, want %q", c.name, c.in, f.form, got, f.want)
			}
		}
	}
}

func TestRefused(t *testing.T) {
	t.Parallel()
	var n int
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if Refused(r) {
			n++
		}
	}
	// 32 C0 + 33 DEL and C1 + 2 separators + 5 embeddings and overrides + 4 isolates.
	if n != 32+33+2+5+4 {
		t.Fatalf("%d code points refused", n)
	}
}

func TestClean(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		max      int
		want     string
	}{
		{"clean stays", "Mozilla/5.0 (X11; Linux x86_64)", 512, "Mozilla/5.0 (X11; Linux x86_64)"},
		{"controls replaced", "a\tb\x00c\u0085d\u202ee\u2028f", 512, "a\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFDf"},
		{"each invalid byte replaced", "a\xff\xfeb", 512, "a\uFFFD\uFFFDb"},
		{"cut at the limit", "abcdef", 4, "abcd"},
		{"no split of a character", "abcé", 4, "abc"},
		{"no split of a replacement", "ab\x01", 4, "ab"},
		{"replacement fits exactly", "a\x01", 4, "a\uFFFD"},
		{"zero", "abc", 0, ""},
	}
	for _, c := range cases {
		if got := Clean(c.in, c.max); got != c.want {
			t.Errorf("%s: Clean(%q, %d) = %q, want %q", c.name, c.in, c.max, got, c.want)
		}
	}
}

// FuzzText checks the rule's invariants on any input: Line is stricter than Lines and is
// exactly "valid UTF-8 without a refused character"; Lines is Line once its \n and \r\n
// breaks are taken out; Clean always yields acceptable one-line text within its limit that
// is a prefix of the unlimited cleaning, and leaves acceptable text as it is.
func FuzzText(f *testing.F) {
	for _, s := range []string{"", "Anna", "a\nb", "a\r\nb", "a\rb", "\u202e", "\xff", "é\u2028", "\x00\x7f\u0085"} {
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		line, lines := Problem(s, Line), Problem(s, Lines)
		if line == "" && lines != "" {
			t.Fatalf("%q: one-line text refused as lines: %s", s, lines)
		}
		if want := utf8.ValidString(s) && !strings.ContainsFunc(s, Refused); (line == "") != want {
			t.Fatalf("%q: Line problem %q, want acceptable %v", s, line, want)
		}
		joined := strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", ""), "\n", "")
		if !utf8.ValidString(s) && lines == "" {
			t.Fatalf("%q: invalid UTF-8 accepted as lines", s)
		}
		if utf8.ValidString(s) && (lines == "") != (Problem(joined, Line) == "") {
			t.Fatalf("%q: Lines problem %q disagrees with %q on one line", s, lines, joined)
		}
		if max < 0 || max > 1<<16 {
			return
		}
		c := Clean(s, max)
		if len(c) > max || Problem(c, Line) != "" {
			t.Fatalf("Clean(%q, %d) = %q", s, max, c)
		}
		if !strings.HasPrefix(Clean(s, 4*len(s)), c) {
			t.Fatalf("Clean(%q, %d) = %q is not a prefix of the full cleaning", s, max, c)
		}
		if line == "" && len(s) <= max && c != s {
			t.Fatalf("Clean changed acceptable %q to %q", s, c)
		}
	})
}
