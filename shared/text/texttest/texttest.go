// Package texttest is the table every free-text field is tested with (shared/text): what any
// field refuses, what a one-line field accepts and what a field of lines accepts besides.
package texttest

// Case is one sample.
type Case struct {
	Name  string
	Value string
}

// Refused is refused by every field: a bidi override, a C0 control, the line separator.
var Refused = []Case{
	{"bidi override", "Invoice \u202Efdp.exe"},
	{"C0 control", "Approved\u0007"},
	{"line separator", "first\u2028second"},
}

// LineBreak is refused by a one-line field and accepted by a field of lines.
var LineBreak = Case{"line break", "first line\nsecond line\r\nthird"}

// Accepted is accepted by every field: ordinary multilingual text with the implicit direction
// marks and joiners names need.
var Accepted = []Case{
	{"multilingual", "Zoë Ελένη Юлия 李雷 שלום مرحبا"},
	{"direction mark and joiner", "\u200Fعلي\u200E (ok) \u200D👩\u200D💻"},
}

// Each calls check with every sample and whether a field accepts it: the refused never, the
// accepted always, the line break when the field is made of lines.
func Each(lines bool, check func(name, value string, ok bool)) {
	for _, c := range Refused {
		check(c.Name, c.Value, false)
	}
	for _, c := range Accepted {
		check(c.Name, c.Value, true)
	}
	check(LineBreak.Name, LineBreak.Value, lines)
}
