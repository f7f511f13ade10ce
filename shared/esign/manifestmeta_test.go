package esign

import (
	"net/url"
	"testing"
)

// TestManifestMeta: a manifest name is blob metadata as printable ASCII, read back whole; an
// ASCII name (every name written before the encoding) is its own value.
func TestManifestMeta(t *testing.T) {
	t.Parallel()
	for name, same := range map[string]bool{
		"t1/dispatch/b-1/Angebot Zoë Ærø (2).pdf.manifest.json": false,
		"t1/dispatch/b-1/中文 100%.pdf.manifest.json":             false,
		"t1/rendered/corr-1.pdf.manifest.json":                  true,
	} {
		v := ManifestMeta(name)
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] > 0x7e {
				t.Fatalf("%q: byte %d of %q is not printable ASCII", name, i, v)
			}
		}
		if back, err := url.PathUnescape(v); err != nil || back != name || (v == name) != same {
			t.Errorf("%q: value %q, back %q %v", name, v, back, err)
		}
	}
}
