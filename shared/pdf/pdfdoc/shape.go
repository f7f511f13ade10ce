package pdfdoc

import "unicode"

// Shape prepares logical-order text for drawing left to right with the embedded font:
// Arabic letters take their contextual presentation forms (isolated, initial, medial, final,
// and the lam-alef ligatures) and right-to-left runs (Hebrew, Arabic, with the spaces and
// punctuation between them) are reversed into visual order, with paired brackets mirrored.
//
// This is a deliberate subset of the Unicode bidirectional algorithm for single lines of a
// left-to-right paragraph (a label followed by a name or value): digits inside a right-to-left
// run keep their left-to-right order, and explicit embedding controls are ignored.
func Shape(s string) string {
	rs := joinArabic([]rune(s))
	return string(reorder(rs))
}

// arabicForms maps a base letter to its presentation forms: isolated, final, initial, medial
// (right-joining letters have only the first two).
var arabicForms = func() map[rune][]rune {
	counts := []struct {
		base rune
		n    int
	}{
		{0x621, 1}, {0x622, 2}, {0x623, 2}, {0x624, 2}, {0x625, 2}, {0x626, 4}, {0x627, 2},
		{0x628, 4}, {0x629, 2}, {0x62A, 4}, {0x62B, 4}, {0x62C, 4}, {0x62D, 4}, {0x62E, 4},
		{0x62F, 2}, {0x630, 2}, {0x631, 2}, {0x632, 2}, {0x633, 4}, {0x634, 4}, {0x635, 4},
		{0x636, 4}, {0x637, 4}, {0x638, 4}, {0x639, 4}, {0x63A, 4}, {0x641, 4}, {0x642, 4},
		{0x643, 4}, {0x644, 4}, {0x645, 4}, {0x646, 4}, {0x647, 4}, {0x648, 2}, {0x649, 2},
		{0x64A, 4},
	}
	m := make(map[rune][]rune, len(counts))
	next := rune(0xFE80)
	for _, c := range counts {
		forms := make([]rune, c.n)
		for i := range forms {
			forms[i] = next
			next++
		}
		m[c.base] = forms
	}
	return m
}()

var presentationBase = func() map[rune]rune {
	m := map[rune]rune{}
	for base, forms := range arabicForms {
		for _, f := range forms {
			m[f] = base
		}
	}
	return m
}()

// lamAlef maps the alef variant following a lam to the isolated form of the ligature (the
// final form is the next code point).
var lamAlef = map[rune]rune{0x622: 0xFEF5, 0x623: 0xFEF7, 0x625: 0xFEF9, 0x627: 0xFEFB}

const tatweel = 0x640

func isTransparent(r rune) bool {
	return (r >= 0x64B && r <= 0x65F) || r == 0x670
}

// joinsLeft reports whether r connects to the following letter (dual-joining or tatweel).
func joinsLeft(r rune) bool { return r == tatweel || len(arabicForms[r]) == 4 }

// joinsRight reports whether r connects to the preceding letter.
func joinsRight(r rune) bool { return r == tatweel || len(arabicForms[r]) >= 2 }

func joinArabic(rs []rune) []rune {
	out := make([]rune, 0, len(rs))
	neighbour := func(i, step int) rune {
		for j := i + step; j >= 0 && j < len(rs); j += step {
			if !isTransparent(rs[j]) {
				return rs[j]
			}
		}
		return 0
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		forms, ok := arabicForms[r]
		if !ok {
			out = append(out, r)
			continue
		}
		prevJoins := joinsLeft(neighbour(i, -1))
		if r == 0x644 {
			if lig, ok := lamAlef[neighbour(i, 1)]; ok && i+1 < len(rs) && !isTransparent(rs[i+1]) {
				if prevJoins {
					lig++
				}
				out = append(out, lig)
				i++
				continue
			}
		}
		nextJoins := len(forms) == 4 && joinsRight(neighbour(i, 1))
		switch {
		case len(forms) == 1:
			out = append(out, forms[0])
		case prevJoins && nextJoins:
			out = append(out, forms[3])
		case prevJoins:
			out = append(out, forms[1])
		case nextJoins:
			out = append(out, forms[2])
		default:
			out = append(out, forms[0])
		}
	}
	return out
}

// unshape maps a presentation form back to the letters it stands for, for /ToUnicode. The text
// is drawn in visual order, so a lam-alef ligature stands for alef then lam: a reader that puts
// a right-to-left run back in logical order (poppler, pdf.js) reverses the code points and gets
// lam, alef.
func unshape(r rune) []rune {
	if b, ok := presentationBase[r]; ok {
		return []rune{b}
	}
	for alef, lig := range lamAlef {
		if r == lig || r == lig+1 {
			return []rune{alef, 0x644}
		}
	}
	return []rune{r}
}

func isRTL(r rune) bool {
	return unicode.In(r, unicode.Hebrew, unicode.Arabic) || (r >= 0xFB1D && r <= 0xFDFF) || (r >= 0xFE70 && r <= 0xFEFF)
}

// RTL reports whether the first strong character of s (a letter) is right-to-left (Hebrew
// or Arabic): such a value is right-aligned where a field does not say otherwise.
func RTL(s string) bool {
	for _, r := range s {
		if isRTL(r) {
			return true
		}
		if isStrongLTR(r) {
			return false
		}
	}
	return false
}

func isStrongLTR(r rune) bool { return unicode.IsLetter(r) && !isRTL(r) }

var mirror = map[rune]rune{'(': ')', ')': '(', '[': ']', ']': '[', '{': '}', '}': '{', '<': '>', '>': '<', '«': '»', '»': '«'}

// reorder reverses each right-to-left run: from an RTL character to the last RTL character
// before the next strong LTR character (neutrals between RTL characters join the run).
func reorder(rs []rune) []rune {
	for i := 0; i < len(rs); {
		if !isRTL(rs[i]) {
			i++
			continue
		}
		end := i
		for j := i; j < len(rs) && !isStrongLTR(rs[j]); j++ {
			if isRTL(rs[j]) {
				end = j
			}
		}
		reverseRun(rs[i : end+1])
		i = end + 1
	}
	return rs
}

func reverseRun(run []rune) {
	for a, b := 0, len(run)-1; a < b; a, b = a+1, b-1 {
		run[a], run[b] = run[b], run[a]
	}
	for k, r := range run {
		if m, ok := mirror[r]; ok {
			run[k] = m
		}
	}
	// digits keep left-to-right order inside the reversed run
	for k := 0; k < len(run); {
		if !unicode.IsDigit(run[k]) {
			k++
			continue
		}
		e := k
		for e+1 < len(run) && (unicode.IsDigit(run[e+1]) || run[e+1] == '.' || run[e+1] == ',') {
			e++
		}
		for a, b := k, e; a < b; a, b = a+1, b-1 {
			run[a], run[b] = run[b], run[a]
		}
		k = e + 1
	}
}
