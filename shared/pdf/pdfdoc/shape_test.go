package pdfdoc

import (
	"strings"
	"testing"
)

func TestShape(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"latin untouched", "Zoë Łukasiewicz", "Zoë Łukasiewicz"},
		{"hebrew reversed", "שלום", "םולש"},
		{"hebrew after label", "Name: אב", "Name: בא"},
		{"arabic joined and reversed", "لا", "\uFEFB"},
		{"arabic forms", "بب", "\uFE90\uFE91"}, // visual: final beh, initial beh
		{"brackets mirrored in rtl run", "(אב)", "(בא)"},
		{"trailing digits stay after the run (LTR paragraph)", "אב 12", "בא 12"},
		{"digits inside a run keep order", "א 12 ב", "ב 12 א"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Shape(tc.in); got != tc.want {
				t.Fatalf("Shape(%q) = %q %U, want %q %U", tc.in, got, []rune(got), tc.want, []rune(tc.want))
			}
		})
	}
}

func TestUnshape(t *testing.T) {
	t.Parallel()
	if got := string(unshape(0xFEFB)); got != "\u0627\u0644" { // visual order: alef, lam

		t.Fatalf("lam-alef ligature maps to %q", got)
	}
	if got := string(unshape(0xFE91)); got != "ب" {
		t.Fatalf("initial beh maps to %q", got)
	}
}

func TestSubsetKeepsUsedGlyphs(t *testing.T) {
	t.Parallel()
	fc, err := loadFace()
	if err != nil {
		t.Fatal(err)
	}
	g, _ := fc.glyph('Å')
	sub, err := subsetTrueType(fc.raw, []uint16{0, g})
	if err != nil {
		t.Fatal(err)
	}
	if len(sub) >= len(fc.raw)/4 {
		t.Fatalf("subset is %d bytes of %d", len(sub), len(fc.raw))
	}
	tables, err := ttTables(sub)
	if err != nil || tables["glyf"] == nil || len(tables["glyf"]) == 0 {
		t.Fatalf("subset tables: %v", err)
	}
	if ttChecksum(sub) != 0xB1B0AFBA {
		t.Fatalf("font checksum adjustment wrong")
	}
}

// TestWrapNarrow: a width narrower than one letter still ends, one letter a line.
func TestWrapNarrow(t *testing.T) {
	t.Parallel()
	d := New()
	f, err := NewFont(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []float64{0, 1} {
		if got := Wrap(f, "ab c", 10, width); len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "c" {
			t.Errorf("Wrap at width %v = %q, want [a b c]", width, got)
		}
	}
}

// TestWrapLongWord: a word wider than the line is cut into the longest heads that fit, in
// order, Latin and two-byte letters alike.
func TestWrapLongWord(t *testing.T) {
	t.Parallel()
	d := New()
	f, err := NewFont(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{strings.Repeat("a", 700), strings.Repeat("Ωλ", 400)} {
		const size, width = 10, 150
		lines := Wrap(f, "x "+word, size, width)
		if len(lines) < 3 || lines[0] != "x" || strings.Join(lines[1:], "") != word {
			t.Fatalf("Wrap = %d lines starting %q, want x then the word in pieces", len(lines), lines[0])
		}
		for i, line := range lines[1:] {
			rs := []rune(line)
			if TextWidth(f, line, size) > width {
				t.Fatalf("line %d (%d letters) is wider than %v", i+1, len(rs), float64(width))
			}
			if i+2 < len(lines) && TextWidth(f, line+string([]rune(lines[i+2])[:1]), size) <= width {
				t.Fatalf("line %d (%d letters) could hold the next letter", i+1, len(rs))
			}
		}
	}
}
