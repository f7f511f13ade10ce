package server

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"

	"github.com/esign-svc/esign/shared/i18n"
)

//go:embed static page.html
var assets embed.FS

var pageTemplate = template.Must(template.ParseFS(assets, "page.html"))

func staticHandler() http.Handler {
	sub, err := fs.Sub(assets, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		files.ServeHTTP(w, r)
	})
}

// pageData is what the page shell carries for its script: where the service's API and the
// portal's own routes are, the page's language and its part of the message catalogue. Nothing
// secret is ever put in a page.
type pageData struct {
	Title     string
	Page      string
	Base      string // the portal's base path ("" at the root)
	API       string // {ServiceURL}/api
	Lang      string // the page's language (i18n.Supported)
	Dir       string // ltr or rtl
	Chosen    bool   // the language was chosen with ?lang= (the script keeps it over the slot's locale)
	Text      map[string]string
	Languages []language
}

// language is one entry of the language switcher: a link to this page in that language.
type language struct {
	Lang, Name, Href string
	Current          bool
}

// catalogueParts are the catalogue keys and key prefixes each page's scripts use (its own and
// those it imports: common.js on every page, pad.js on sign, formcheck.js on workflow), so that
// a page carries only its part (TestEachPageCarriesTheKeysItsScriptsUse).
var catalogueParts = map[string][]string{
	"sign":     {"page.", "common.", "otp.", "sign.", "pad."},
	"deliver":  {"page.", "common.", "otp.", "deliver.", "sign.invalid.title", "sign.incomplete.title"},
	"workflow": {"page.", "common.", "otp.", "wf.", "check.", "sign.invalid.title"},
	"review":   {"page.", "common.", "otp.", "review.", "sign.invalid.title"},
	"home":     {"page.", "common.", "otp.", "home."},
}

// page serves the shell of one page in the language chosen by ?lang= (a supported language),
// else the browser's Accept-Language, else English; its script (static/<name>.js) does the
// rest and may switch to the signer's own locale once the session says it.
func (s *Server) page(name, titleKey string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		lang, chosen := q.Get("lang"), true
		if !i18n.Supports(lang) {
			lang, chosen = i18n.Negotiate(r.Header.Get("Accept-Language")), false
		}
		var langs []language
		for _, l := range i18n.Supported {
			q.Set("lang", l)
			langs = append(langs, language{Lang: l, Name: i18n.T(l, "language.name", nil), Href: "?" + q.Encode(), Current: l == lang})
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Language", lang)
		h.Set("Vary", "Accept-Language")
		h.Set("Cache-Control", "no-store")
		_ = pageTemplate.Execute(w, pageData{Title: i18n.T(lang, titleKey, nil), Page: name, Base: s.base.Path, API: s.api,
			Lang: lang, Dir: i18n.Dir(lang), Chosen: chosen, Text: i18n.Catalogue(lang, catalogueParts[name]...), Languages: langs})
	}
}
