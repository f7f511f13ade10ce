package blobpath

import (
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

func TestParsePath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in              string
		container, name string // empty container: want invalid_blob_path
	}{
		{"documents/a.pdf", "documents", "a.pdf"},
		{"templates/nda/v1/template.yaml", "templates", "nda/v1/template.yaml"},
		{"abc/x:y.pdf", "abc", "x:y.pdf"},
		{"a-1-b/…ünïcode name.pdf", "a-1-b", "…ünïcode name.pdf"},
		{"", "", ""},
		{"documents", "", ""},
		{"documents/", "", ""},
		{"/documents/a.pdf", "", ""},
		{"documents//a.pdf", "", ""},
		{"documents/a/../../b", "", ""},
		{"documents/../secrets/x", "", ""},
		{"documents/./a.pdf", "", ""},
		{"documents/a/..", "", ""},
		{`documents\a.pdf`, "", ""},
		{`documents/a\..\b`, "", ""},
		{"https://evil.blob.core.windows.net/documents/a.pdf", "", ""},
		{"http:/x/documents/a.pdf", "", ""},
		{"c:/documents/a.pdf", "", ""},
		{"//evil.example/documents/a", "", ""},
		{"Documents/a.pdf", "", ""},
		{"do/a.pdf", "", ""},
		{strings.Repeat("a", 64) + "/x", "", ""},
		{"-docs/a.pdf", "", ""},
		{"docs-/a.pdf", "", ""},
		{"do--cs/a.pdf", "", ""},
		{"doc_s/a.pdf", "", ""},
		{"documents/a\x00.pdf", "", ""},
		{"documents/a\u0085.pdf", "", ""},
		{"documents/a\u202e.pdf", "", ""},
		{"documents/a\u2028.pdf", "", ""},
		{"documents/a\n.pdf", "", ""},
		{"documents/" + strings.Repeat("n", 1025), "", ""},
		{"documents/\xff", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			p, err := ParseFieldPath("pdfBlobPath", tc.in)
			if tc.container == "" {
				e, ok := apperr.As(err)
				if !ok || e.Kind != apperr.KindInvalid || e.Code != CodeInvalidBlobPath {
					t.Fatalf("ParseFieldPath(%q) = %+v, %v; want invalid_blob_path", tc.in, p, err)
				}
				if len(e.Fields) != 1 || e.Fields[0].Field != "pdfBlobPath" {
					t.Errorf("fields = %+v, want pdfBlobPath", e.Fields)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseFieldPath(%q): %v", tc.in, err)
			}
			if p.Container != tc.container || p.Name != tc.name || p.String() != tc.in {
				t.Errorf("got %+v, want %s / %s", p, tc.container, tc.name)
			}
		})
	}
}

func TestRequireContainer(t *testing.T) {
	t.Parallel()
	p, err := ParsePath("templates/x.zip")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.RequireContainer("templatePath", "templates"); err != nil {
		t.Errorf("allowed container refused: %v", err)
	}
	err = p.RequireContainer("pdfBlobPath", "documents")
	if e, ok := apperr.As(err); !ok || e.Code != CodeInvalidBlobPath || e.Fields[0].Field != "pdfBlobPath" {
		t.Errorf("other container: %v, want invalid_blob_path on pdfBlobPath", err)
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"documents/a.pdf", "a/../b", "/x", `c\d`, "https://x/y", "abc/./d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			if apperr.KindOf(err) != apperr.KindInvalid {
				t.Fatalf("non-invalid error %v", err)
			}
			return
		}
		if !ValidContainerName(p.Container) || p.String() != s {
			t.Fatalf("accepted %q as %+v", s, p)
		}
		for _, seg := range strings.Split(p.Name, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("accepted segment %q in %q", seg, s)
			}
		}
		if strings.ContainsAny(s, `\`) || strings.Contains(s, "://") {
			t.Fatalf("accepted %q", s)
		}
	})
}

// Tenant confines a request's path in one container to the caller's folder: another tenant's
// folder, the container's root, a tenant id that is only a prefix and traversal out of the
// folder are one answer, whatever is stored; other containers pass through to their own checks.
func TestTenant(t *testing.T) {
	const a, b = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	for _, tc := range []struct {
		path, tenant string
		ok           bool
	}{
		{"documents/" + a + "/uploads/x.pdf", a, true},
		{"documents/" + a + "/rendered/c.pdf", a, true},
		{"documents/" + b + "/rendered/c.pdf", a, false},
		{"documents/rendered/c.pdf", a, false},
		{"documents/" + a + "x/c.pdf", a, false},
		{"documents/" + a, a, false},
		{"documents/" + a + "/c.pdf", "", false},
		{"signed/" + b + "/g/signed.pdf", a, true}, // another container: not this call's to judge
	} {
		p, err := ParseFieldPath("pdfBlobPath", tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		_, err = Tenant("pdfBlobPath", p, "documents", tc.tenant)
		if tc.ok != (err == nil) {
			t.Fatalf("%s as %q: %v, want ok=%v", tc.path, tc.tenant, err, tc.ok)
		}
		if err != nil {
			e, _ := apperr.As(err)
			if e.Code != CodeInvalidBlobPath || len(e.Fields) != 1 || e.Fields[0].Field != "pdfBlobPath" || strings.Contains(e.Error(), b) {
				t.Fatalf("%s: %+v, want invalid_blob_path on pdfBlobPath without the path", tc.path, e)
			}
		}
	}
	// Traversal never reaches the confinement: the parse refuses it.
	if _, err := ParseFieldPath("pdfBlobPath", "documents/"+a+"/../"+b+"/c.pdf"); err == nil {
		t.Fatal("traversal parsed")
	}
}

func TestTenantName(t *testing.T) {
	if got := TenantName("t1", "rendered/", "c-1", ".pdf"); got != "t1/rendered/c-1.pdf" {
		t.Fatalf("TenantName = %q", got)
	}
}
