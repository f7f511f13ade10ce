package i18n

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"testing"
)

var placeholder = regexp.MustCompile(`\{[a-zA-Z]+\}`)

// TestEveryKeyInEveryCatalogue fails on a key missing from (or added only to) a catalogue, an
// empty text, or a translation whose placeholders differ from English's.
func TestEveryKeyInEveryCatalogue(t *testing.T) {
	t.Parallel()
	en := catalogues[Default]
	if len(en) < 100 {
		t.Fatalf("the English catalogue has %d keys", len(en))
	}
	for _, l := range Supported {
		c := catalogues[l]
		if missing, extra := diff(en, c); len(missing)+len(extra) > 0 {
			t.Errorf("%s: missing %v, not in en %v", l, missing, extra)
		}
		for k, v := range c {
			if v == "" {
				t.Errorf("%s: %s is empty", l, k)
			}
			want, got := placeholder.FindAllString(en[k], -1), placeholder.FindAllString(v, -1)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(want, got) {
				t.Errorf("%s: %s has placeholders %v, English %v", l, k, got, want)
			}
		}
	}
}

func diff(a, b map[string]string) (missing, extra []string) {
	for k := range a {
		if _, ok := b[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			extra = append(extra, k)
		}
	}
	return missing, extra
}

// TestDiffFindsAMissingKey is the check above failing on a catalogue that lacks a key.
func TestDiffFindsAMissingKey(t *testing.T) {
	t.Parallel()
	broken := map[string]string{}
	for k, v := range catalogues["de"] {
		broken[k] = v
	}
	delete(broken, "sign.submit")
	if missing, _ := diff(catalogues[Default], broken); !slices.Equal(missing, []string{"sign.submit"}) {
		t.Fatalf("missing = %v", missing)
	}
}

// consentDigests pins each version's texts: a changed text under an existing version fails
// here (a new wording is a new version file).
var consentDigests = map[string]string{
	"2026-11-01/en": "46281a13b819146d9b1645b6936832af8ab758c307acd9ffd98c72e002e71bef",
	"2026-11-01/de": "b82fb77b184a84b343eaa37370b2beec239ed0123d761af611eab3546f50b8b5",
	"2026-11-01/fr": "bc704850e9b517651cad5d4523bd6607c2d0fb600606a110612b2a810e976d6c",
	"2026-11-01/ar": "bbf78b18cb077d3b588792cb952290d1e7bf189ab02fed05a5bb41eb2b3d9708",
}

func TestConsentVersionsAreCompleteAndFrozen(t *testing.T) {
	t.Parallel()
	for _, v := range ConsentVersions() {
		en, _, _ := Consent(v, Default)
		for _, l := range Supported {
			st, in, ok := Consent(v, l)
			if !ok || in != l {
				t.Fatalf("%s/%s: ok %v, language %q", v, l, ok, in)
			}
			if len(st) != len(en) {
				t.Fatalf("%s/%s: %d statements, English %d", v, l, len(st), len(en))
			}
			h := sha256.New()
			for i, s := range st {
				if s.ID != en[i].ID || s.Text == "" {
					t.Errorf("%s/%s: statement %d is %q (%d bytes), English %q", v, l, i, s.ID, len(s.Text), en[i].ID)
				}
				h.Write([]byte(s.ID + "\x00" + s.Text + "\x00"))
			}
			got := hex.EncodeToString(h.Sum(nil))
			if want, pinned := consentDigests[v+"/"+l]; !pinned || want != got {
				t.Errorf("%s/%s: texts digest %s, pinned %q: a released version's wording never changes", v, l, got, want)
			}
		}
	}
	if _, _, ok := Consent("1999-01-01", "en"); ok {
		t.Error("an unknown version was found")
	}
}

func TestCanonical(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "", "de": "de", "de-AT": "de", "FR": "fr", "fr-CA": "fr", "ar-EG": "ar", "en-GB": "en", "ar-Arab-SA": "ar"} {
		if got, err := Canonical(in); err != nil || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, code := range map[string]string{"ja": CodeLocaleUnsupported, "pt-BR": CodeLocaleUnsupported, "de_DE": CodeLocaleInvalid,
		"x": CodeLocaleInvalid, "deutsch-land!": CodeLocaleInvalid, "en-": CodeLocaleInvalid} {
		_, err := Canonical(in)
		le, ok := err.(*LocaleError)
		if !ok || le.Code != code {
			t.Errorf("Canonical(%q) = %v; want %s", in, err, code)
		}
	}
}

func TestNegotiate(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "en", "de-DE,de;q=0.9,en;q=0.8": "de", "ja,fr;q=0.5": "fr", "ar-SA": "ar",
		"ja": "en", "en-US,en;q=0.9": "en", ";;;garbage": "en", "fr-CH, de;q=0.9": "fr"} {
		if got := Negotiate(in); got != want {
			t.Errorf("Negotiate(%q) = %q; want %q", in, got, want)
		}
	}
	if got := Choose("ar", "de"); got != "ar" {
		t.Errorf("Choose(ar, de) = %q", got)
	}
	if got := Choose("", "de"); got != "de" {
		t.Errorf("Choose('', de) = %q", got)
	}
}

func TestTFallsBackAndFills(t *testing.T) {
	t.Parallel()
	if got := T("de", "sign.pageOf", map[string]string{"n": "2", "total": "3"}); got != "Seite 2 von 3" {
		t.Errorf("got %q", got)
	}
	if got := T("ja", "sign.submit", nil); got != "Sign the document" {
		t.Errorf("unsupported language: %q", got)
	}
	if got := T("fr", "no.such.key", nil); got != "no.such.key" {
		t.Errorf("missing key: %q", got)
	}
	if Dir("ar") != "rtl" || Dir("de") != "ltr" {
		t.Error("Dir")
	}
	c := Catalogue("ar", "pad.")
	if c["pad.clear"] != "مسح" || c["sign.submit"] != "" {
		t.Errorf("Catalogue: %v", c)
	}
}
