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
		line     string // the whole of Problem(in, Line); "" for none
		lines    string // the whole of Problem(in, Lines)
	}{
		{"empty", "", "", ""},
		{"latin", "Anna Müller-Lüdenscheidt", "", ""},
		{"arabic with marks", "\u200fمحمد\u200e (ZWNJ\u200c)", "", ""},
		{"emoji with joiner", "👩\u200d💻 Q&A <b>", "", ""},
		{"replacement char is text", "a\uFFFDb", "", ""},
		{"NUL", "a\x00b", "must not contain the control character U+0000 (character 2)", "must not contain the control character U+0000 (character 2)"},
		{"BEL", "\a", "must not contain the control character U+0007 (character 1)", "must not contain the control character U+0007 (character 1)"},
		{"ESC", "x\x1b[31m", "must not contain the control character U+001B (character 2)", "must not contain the control character U+001B (character 2)"},
		{"tab", "a\tb", "must not contain the control character U+0009 (character 2)", "must not contain the control character U+0009 (character 2)"},
		{"DEL", "a\x7f", "must not contain the control character U+007F (character 2)", "must not contain the control character U+007F (character 2)"},
		{"NEL", "a\u0085b", "must not contain the control character U+0085 (character 2)", "must not contain the control character U+0085 (character 2)"},
		{"CSI", "\u009b", "must not contain the control character U+009B (character 1)", "must not contain the control character U+009B (character 1)"},
		{"last C1", "\u009f", "must not contain the control character U+009F (character 1)", "must not contain the control character U+009F (character 1)"},
		{"first after C1", "\u00a0nbsp", "", ""},
		{"LF", "a\nb", "must be one line: a line break at character 2", ""},
		{"CRLF", "a\r\nb\r\n", "must be one line: a line break at character 2", ""},
		{"lone CR", "a\rb", "must be one line: a line break at character 2", "may break lines only with \\n or \\r\\n: a lone carriage return at character 2"},
		{"CR at end", "ab\r", "must be one line: a line break at character 3", "may break lines only with \\n or \\r\\n: a lone carriage return at character 3"},
		{"CR CR LF", "a\r\r\n", "must be one line: a line break at character 2", "may break lines only with \\n or \\r\\n: a lone carriage return at character 2"},
		{"line separator", "a\u2028b", "must not contain the line or paragraph separator U+2028 (character 2)", "must not contain the line or paragraph separator U+2028 (character 2)"},
		{"paragraph separator", "\u2029", "must not contain the line or paragraph separator U+2029 (character 1)", "must not contain the line or paragraph separator U+2029 (character 1)"},
		{"LRE", "\u202a", "must not contain the bidirectional formatting character U+202A (character 1)", "must not contain the bidirectional formatting character U+202A (character 1)"},
		{"RLO", "evil\u202egnp.exe", "must not contain the bidirectional formatting character U+202E (character 5)", "must not contain the bidirectional formatting character U+202E (character 5)"},
		{"LRI", "\u2066x", "must not contain the bidirectional formatting character U+2066 (character 1)", "must not contain the bidirectional formatting character U+2066 (character 1)"},
		{"PDI", "x\u2069", "must not contain the bidirectional formatting character U+2069 (character 2)", "must not contain the bidirectional formatting character U+2069 (character 2)"},
		{"next to bidi", "\u2065\u206a\u202f\u2027", "", ""},
		{"invalid byte", "ab\xff", "is not valid UTF-8 (byte 3)", "is not valid UTF-8 (byte 3)"},
		{"truncated sequence", "\xe2\x80", "is not valid UTF-8 (byte 1)", "is not valid UTF-8 (byte 1)"},
		{"encoded surrogate", "\xed\xa0\x80", "is not valid UTF-8 (byte 1)", "is not valid UTF-8 (byte 1)"},
		{"multibyte position", "ééé\u0007", "must not contain the control character U+0007 (character 4)", "must not contain the control character U+0007 (character 4)"},
	}
	for _, c := range cases {
		for _, f := range []struct {
			form Form
			want string
		}{{Line, c.line}, {Lines, c.lines}} {
			got := Problem(c.in, f.form)
			if got != f.want {
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
