package dispatch

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/text"
)

// File names of a batch's PDFs (spec "Distribution settings", fileNameTemplate).
const (
	TokenIndex0 = "{BATCHID}"   // fileNameTemplate: the record's 0-based index
	TokenIndex1 = "{BATCHID_1}" // the 1-based index
	// CombinedName is the combined PDF's name in the batch's folder (mode combined), beside
	// the records' PDFs: no record takes it.
	CombinedName = "combined"
	// MaxFileName is a record PDF's file name's length in characters, ".pdf" included.
	MaxFileName = 120
	extPDF      = ".pdf"
)

// RecordCorrelationID is a record's correlationId: <batch correlationId>-<index+1>.
func (b *Batch) RecordCorrelationID(index int) string {
	return b.CorrelationID + "-" + strconv.Itoa(index+1)
}

// FileName is a record's PDF file name in its batch's folder and ZIP bundle: tmpl with
// {BATCHID} (the 0-based index), {BATCHID_1} (1-based) and {{field}} expanded and used as
// written, with only what is unsafe in a path or a file name replaced (SafeFileName); an
// empty template (or expansion) gives the record's correlationId. seq > 1 is the record's
// place among equal names of its batch (NameSeq): " (seq)" goes before ".pdf". The name is at
// most MaxFileName characters (the expansion is cut, never the suffix) and ends in ".pdf".
func FileName(tmpl string, index int, correlationID string, text func(string) string, seq int) string {
	return withSeq(baseName(tmpl, index, correlationID, text), seq)
}

// baseName is FileName's name before its suffix and length limit.
func baseName(tmpl string, index int, correlationID string, text func(string) string) string {
	name := strings.TrimSpace(tmpl)
	if name != "" {
		if strings.Contains(name, "{BATCHID") { // neither token is a part of the other
			name = strings.ReplaceAll(strings.ReplaceAll(name, TokenIndex1, strconv.Itoa(index+1)), TokenIndex0, strconv.Itoa(index))
		}
		name = SafeFileName(template.Expand(name, text))
		if strings.HasSuffix(strings.ToLower(name), extPDF) {
			name = SafeFileName(name[:len(name)-len(extPDF)])
		}
	}
	if name == "" {
		name = SafeFileName(correlationID)
	}
	return name
}

// withSeq is base with " (seq)" for seq > 1, cut to MaxFileName characters with ".pdf".
func withSeq(base string, seq int) string {
	suffix := ""
	if seq > 1 {
		suffix = " (" + strconv.Itoa(seq) + ")"
	}
	if max := MaxFileName - len(extPDF) - len(suffix); utf8.RuneCountInString(base) > max {
		base = strings.TrimRight(string([]rune(base)[:max]), " .")
	}
	return base + suffix + extPDF
}

// SafeFileName keeps s as written (letters and digits of every script, marks, spaces,
// punctuation) but for what a path or a file name cannot hold: the path separators / and \,
// the characters Windows refuses in a file name (: * ? " < > |), control characters, what
// shared/text refuses (line separators, bidirectional overrides), invalid UTF-8 and U+FFFD. Each run of
// those becomes one '-'; runs of white space become one space; spaces, dots, '-' and '_' are
// trimmed from both ends (no hidden or dot-ending names).
func SafeFileName(s string) string {
	var sb strings.Builder
	dash, space := false, false
	for _, c := range s {
		switch {
		case c == utf8.RuneError, strings.ContainsRune(`/\:*?"<>|`, c), unicode.IsControl(c), text.Refused(c):
			if !dash {
				sb.WriteByte('-')
			}
			dash, space = true, false
		case unicode.IsSpace(c):
			if !space {
				sb.WriteByte(' ')
			}
			dash, space = false, true
		default:
			sb.WriteRune(c)
			dash, space = false, false
		}
	}
	return strings.Trim(sb.String(), " .-_")
}

// fileNames hands out a batch's record file names in index order: the first record of a name
// keeps it, the next equal one gets " (2)", then " (3)", skipping any name already taken.
// Names are equal regardless of case (a ZIP unpacked on Windows or macOS, a download folder);
// the combined PDF's name is taken from the start.
type fileNames struct {
	taken map[string]bool
	next  map[string]int // a base name's last seq tried
}

func newFileNames() *fileNames {
	f := &fileNames{taken: map[string]bool{}, next: map[string]int{}}
	f.taken[strings.ToLower(CombinedName+extPDF)] = true
	return f
}

// claim returns the seq (0: none) that makes withSeq(base, seq) a name not taken (baseName's
// result), and takes it.
func (f *fileNames) claim(base string) int {
	first := strings.ToLower(withSeq(base, 0))
	if !f.taken[first] {
		f.taken[first] = true
		return 0
	}
	for seq := max(f.next[first], 1) + 1; ; seq++ {
		if k := strings.ToLower(withSeq(base, seq)); !f.taken[k] {
			f.taken[k], f.next[first] = true, seq
			return seq
		}
	}
}
