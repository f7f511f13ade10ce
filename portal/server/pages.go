package server

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
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
// portal's own routes are. Nothing secret is ever put in a page.
type pageData struct {
	Title string
	Page  string
	Base  string // the portal's base path ("" at the root)
	API   string // {ServiceURL}/api
}

// page serves the shell of one page; its script (static/<name>.js) does the rest.
func (s *Server) page(name, title string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		_ = pageTemplate.Execute(w, pageData{Title: title, Page: name, Base: s.base.Path, API: s.api})
	}
}
