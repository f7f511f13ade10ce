package graph

import (
	"strings"
	"testing"
)

// FuzzValidate: no input panics, and an accepted target never yields a path that escapes
// its library or breaks Graph's ":/"-delimited path addressing.
func FuzzValidate(f *testing.F) {
	cl, err := NewClient(Config{TenantID: "t", ClientID: "c", ClientSecret: "s"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("https://contoso.sharepoint.com/sites/Legal", "Documents", "A/B", "a.pdf")
	f.Add("https://contoso.sharepoint.com/", "/Shared Documents/", "/../", "..")
	f.Add("https://x.sharepoint.com/sites/a%2F..", "D", "a//b", "c:d")
	f.Fuzz(func(t *testing.T, siteURL, library, folder, file string) {
		chk, err := cl.check(Target{SiteURL: siteURL, LibraryPath: library, FolderPath: folder}, file)
		if err != nil {
			return
		}
		p := escapePath(append(append([]string{}, chk.folder...), chk.file))
		for _, seg := range strings.Split(p, "/") {
			if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, ":?#\\ ") {
				t.Fatalf("accepted %q/%q -> unsafe path %q", folder, file, p)
			}
		}
		if !strings.HasSuffix(chk.site.host, ".sharepoint.com") {
			t.Fatalf("accepted host %q", chk.site.host)
		}
	})
}
