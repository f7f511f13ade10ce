package dispatch

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFileName covers the name rules: the tokens, a template used as written (no index
// appended when it has no index token: once "_<n>" was always added), letters of every script
// kept (once each became '-'), only what a path or file name cannot hold replaced, the
// default, the clash suffix and the length limit.
func TestFileName(t *testing.T) {
	t.Parallel()
	values := map[string]string{"n": "Zoë O'Neil / HR", "id": "A7", "city": "Düsseldorf", "street": "Große Straße",
		"cn": "中文", "evil": "a\u202eb\tc:d*e?f\"g<h>i|j\\k", "dots": "...x..."}
	text := func(k string) string { return values[k] }
	for _, c := range []struct {
		tmpl string
		seq  int
		want string
	}{
		{"{{n}}-{BATCHID_1}", 0, "Zoë O'Neil - HR-5.pdf"},
		{"doc {BATCHID}.pdf", 0, "doc 4.pdf"},
		{"doc {BATCHID}.PDF", 0, "doc 4.pdf"},
		{"{{id}}", 0, "A7.pdf"},
		{"Rechnung {{city}} {{street}} {{cn}}", 0, "Rechnung Düsseldorf Große Straße 中文.pdf"},
		{"Café  Été", 0, "Café Été.pdf"},
		{"{{evil}}", 0, "a-b-c-d-e-f-g-h-i-j-k.pdf"},
		{"{{dots}}", 0, "x.pdf"},
		{"", 0, "batch-1-5.pdf"},
		{"{{missing}}", 0, "batch-1-5.pdf"},
		{"../{{id}}", 0, "A7.pdf"},
		{"{{id}}", 2, "A7 (2).pdf"},
		{"", 3, "batch-1-5 (3).pdf"},
	} {
		if got := FileName(c.tmpl, 4, "batch-1-5", text, c.seq); got != c.want {
			t.Errorf("%q seq %d: %q, want %q", c.tmpl, c.seq, got, c.want)
		}
	}
	long := strings.Repeat("ü", 300)
	for _, seq := range []int{0, 12} {
		got := FileName(long, 0, "c", text, seq)
		if n := utf8.RuneCountInString(got); n != MaxFileName || !utf8.ValidString(got) || !strings.HasSuffix(got, ".pdf") {
			t.Errorf("seq %d: %d characters %q", seq, n, got)
		}
		if seq > 0 && !strings.HasSuffix(got, " (12).pdf") {
			t.Errorf("seq %d: the suffix was cut: %q", seq, got)
		}
	}
}

// TestFileNamesClaim: in index order the first of equal names keeps it, the next get " (2)",
// " (3)", skipping a name another record took as written; equal regardless of case; the
// combined PDF's name is never a record's.
func TestFileNamesClaim(t *testing.T) {
	t.Parallel()
	f := newFileNames()
	var got []string
	for _, tmpl := range []string{"Offer", "offer", "Offer (3)", "OFFER", "combined", "Combined", "Other"} {
		seq := f.claim(baseName(tmpl, 0, "c", nil))
		got = append(got, FileName(tmpl, 0, "c", nil, seq))
	}
	want := []string{"Offer.pdf", "offer (2).pdf", "Offer (3).pdf", "OFFER (4).pdf", "combined (2).pdf", "Combined (3).pdf", "Other.pdf"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("names %q, want %q", got, want)
	}
}

// BenchmarkFileNamesClaim10000Equal names a batch of 10,000 records whose names are all equal
// (the worst case: each claim resumes after the base name's last suffix, not from " (2)").
func BenchmarkFileNamesClaim10000Equal(b *testing.B) {
	values := map[string]string{"n": "Jürgen Groß"}
	text := func(k string) string { return values[k] }
	b.ReportAllocs()
	for range b.N {
		f := newFileNames()
		for i := range 10000 {
			f.claim(baseName("Angebot {{n}}", i, "c", text))
		}
	}
}
