// Package fonts carries the TrueType font the PDF code embeds so that names in any of the
// scripts it covers render in stamps and evidence certificates.
//
// DejaVu Sans (Bitstream Vera derivative, licence in LICENSE: redistribution permitted) covers
// Latin including Latin Extended, Greek, Cyrillic, Armenian, Georgian, Hebrew and Arabic (with
// presentation forms). It does not cover CJK (Chinese, Japanese, Korean), Devanagari and most
// other Indic scripts, Thai, or emoji: such characters render as the font's .notdef box.
package fonts

import _ "embed"

//go:embed DejaVuSans.ttf
var dejaVuSans []byte

// DejaVuSans returns the bytes of DejaVuSans.ttf. The slice is shared: callers must not modify it.
func DejaVuSans() []byte { return dejaVuSans }
