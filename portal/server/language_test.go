package server

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestPageLanguage: the page shell is in the language of ?lang=, else the browser's
// Accept-Language, else English; Arabic is right to left; the switcher links every language
// keeping the page's query; the script's catalogue is in the page's language.
func TestPageLanguage(t *testing.T) {
	t.Parallel()
	s := newServer(t, "https://portal.test")
	for _, tc := range []struct{ target, accept, lang, dir, title, chosen string }{
		{"/sign?token=abc", "", "en", "ltr", "Sign a document", ""},
		{"/sign?token=abc", "de-DE,de;q=0.9,en;q=0.5", "de", "ltr", "Ein Dokument unterschreiben", ""},
		{"/sign?token=abc", "ja, fr;q=0.3", "fr", "ltr", "Signer un document", ""},
		{"/sign?token=abc&lang=ar", "de", "ar", "rtl", "توقيع مستند", " data-lang-chosen"},
		{"/sign?token=abc&lang=xx", "fr", "fr", "ltr", "Signer un document", ""},
		{"/deliver/d1?t=x", "ar-EG", "ar", "rtl", "مستند لك", ""},
	} {
		w := do(s, http.MethodGet, tc.target, "", map[string]string{"Accept-Language": tc.accept})
		b := w.Body.String()
		if w.Code != 200 || !strings.Contains(b, `<html lang="`+tc.lang+`" dir="`+tc.dir+`">`) || !strings.Contains(b, "<title>"+tc.title+"</title>") ||
			!strings.Contains(b, `data-lang="`+tc.lang+`"`+tc.chosen+">") || w.Header().Get("Content-Language") != tc.lang {
			t.Errorf("%s (%q): %d\n%s", tc.target, tc.accept, w.Code, b)
			continue
		}
		m := regexp.MustCompile(`(?s)<script type="application/json" id="i18n">(.*?)</script>`).FindStringSubmatch(b)
		var cat map[string]string
		if m == nil || json.Unmarshal([]byte(m[1]), &cat) != nil || cat["page.title.sign"] == "" || cat["email.hello"] != "" {
			t.Errorf("%s: catalogue %q", tc.target, m)
		}
		for _, l := range []string{"en", "de", "fr", "ar"} {
			if !strings.Contains(b, `lang=`+l) || !strings.Contains(b, `hreflang="`+l+`"`) {
				t.Errorf("%s: no switcher link to %s", tc.target, l)
			}
		}
		if strings.HasPrefix(tc.target, "/sign") && !strings.Contains(b, "lang=de&amp;token=abc") {
			t.Errorf("%s: the switcher drops the token:\n%s", tc.target, b)
		}
	}
}

// TestEachPageCarriesTheKeysItsScriptsUse: every t("key") of a page's script and the scripts
// it imports is in the catalogue the page carries (a missing one would show the key).
func TestEachPageCarriesTheKeysItsScriptsUse(t *testing.T) {
	t.Parallel()
	key := regexp.MustCompile(`\bt[n]?\("([a-zA-Z.]+)"`)
	imported := regexp.MustCompile(`from "\./([a-z]+\.js)"`)
	var keysOf func(file string, seen map[string]bool) []string
	keysOf = func(file string, seen map[string]bool) []string {
		if seen[file] {
			return nil
		}
		seen[file] = true
		src, err := assets.ReadFile("static/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range key.FindAllStringSubmatch(string(src), -1) {
			out = append(out, m[1])
		}
		for _, m := range imported.FindAllStringSubmatch(string(src), -1) {
			out = append(out, keysOf(m[1], seen)...)
		}
		return out
	}
	s := newServer(t, "https://portal.test")
	for page, target := range map[string]string{"sign": "/sign?token=a", "deliver": "/deliver/d?t=x", "workflow": "/workflow/w?pt=y",
		"review": "/workflow/w/review?pt=z", "home": "/"} {
		b := do(s, http.MethodGet, target, "", nil).Body.String()
		m := regexp.MustCompile(`(?s)<script type="application/json" id="i18n">(.*?)</script>`).FindStringSubmatch(b)
		var cat map[string]string
		if m == nil || json.Unmarshal([]byte(m[1]), &cat) != nil {
			t.Fatalf("%s: no catalogue", page)
		}
		keys := keysOf(page+".js", map[string]bool{})
		if len(keys) < 3 {
			t.Fatalf("%s: %d keys found in its scripts", page, len(keys))
		}
		for _, k := range keys {
			if _, ok := cat[k]; !ok && !strings.HasSuffix(k, ".") {
				t.Errorf("%s page lacks %s", page, k)
			}
		}
		if page != "sign" && cat["sign.submit"] != "" {
			t.Errorf("%s page carries the sign page's texts", page)
		}
	}
}
