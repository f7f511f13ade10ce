package graph

import (
	"fmt"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

func TestValidateTarget(t *testing.T) {
	t.Parallel()
	cl, err := NewClient(Config{TenantID: "contoso.onmicrosoft.com", ClientID: "id", ClientSecret: "s",
		AllowedHosts: []string{"sp.example.test", ".sharepoint.us"}})
	if err != nil {
		t.Fatal(err)
	}
	ok := Target{SiteURL: "https://contoso.sharepoint.com/sites/Legal", LibraryPath: "Documents", FolderPath: "A/B"}
	with := func(mut func(*Target)) Target { t := ok; mut(&t); return t }
	tests := []struct {
		name   string
		target Target
		file   string
		field  string // "" = valid
	}{
		{"valid", ok, "a.pdf", ""},
		{"root site, empty folder, slashes trimmed", Target{SiteURL: "https://Contoso.SharePoint.com/", LibraryPath: "/Shared Documents/", FolderPath: "/"}, "a.pdf", ""},
		{"unicode and spaces allowed", with(func(t *Target) { t.FolderPath = "/Verträge 2024/Q1/" }), "Ä b#c%.pdf", ""},
		{"allowed exact host", with(func(t *Target) { t.SiteURL = "https://sp.example.test/sites/x" }), "a.pdf", ""},
		{"allowed suffix host", with(func(t *Target) { t.SiteURL = "https://agency.sharepoint.us/sites/x" }), "a.pdf", ""},
		{"http site", with(func(t *Target) { t.SiteURL = "http://contoso.sharepoint.com/sites/Legal" }), "a.pdf", FieldSiteURL},
		{"foreign host", with(func(t *Target) { t.SiteURL = "https://evil.example.com/sites/Legal" }), "a.pdf", FieldSiteURL},
		{"lookalike host", with(func(t *Target) { t.SiteURL = "https://contoso.sharepoint.com.evil.io/sites/Legal" }), "a.pdf", FieldSiteURL},
		{"bare suffix host", with(func(t *Target) { t.SiteURL = "https://sharepoint.com/sites/Legal" }), "a.pdf", FieldSiteURL},
		{"site with credentials", with(func(t *Target) { t.SiteURL = "https://u:p@contoso.sharepoint.com/sites/Legal" }), "a.pdf", FieldSiteURL},
		{"site with query", with(func(t *Target) { t.SiteURL = "https://contoso.sharepoint.com/sites/Legal?x=1" }), "a.pdf", FieldSiteURL},
		{"site with port", with(func(t *Target) { t.SiteURL = "https://contoso.sharepoint.com:8443/sites/Legal" }), "a.pdf", FieldSiteURL},
		{"site dotdot", with(func(t *Target) { t.SiteURL = "https://contoso.sharepoint.com/sites/../x" }), "a.pdf", FieldSiteURL},
		{"relative site", with(func(t *Target) { t.SiteURL = "/sites/Legal" }), "a.pdf", FieldSiteURL},
		{"missing site", with(func(t *Target) { t.SiteURL = "" }), "a.pdf", FieldSiteURL},
		{"missing library", with(func(t *Target) { t.LibraryPath = " " }), "a.pdf", FieldLibraryPath},
		{"library URL", with(func(t *Target) { t.LibraryPath = "https://contoso.sharepoint.com/x" }), "a.pdf", FieldLibraryPath},
		{"library dotdot", with(func(t *Target) { t.LibraryPath = "../Documents" }), "a.pdf", FieldLibraryPath},
		{"folder dotdot", with(func(t *Target) { t.FolderPath = "A/../../B" }), "a.pdf", FieldFolderPath},
		{"folder dot", with(func(t *Target) { t.FolderPath = "./A" }), "a.pdf", FieldFolderPath},
		{"folder empty segment", with(func(t *Target) { t.FolderPath = "A//B" }), "a.pdf", FieldFolderPath},
		{"folder absolute URL", with(func(t *Target) { t.FolderPath = "https://evil.example.com/A" }), "a.pdf", FieldFolderPath},
		{"folder network path", with(func(t *Target) { t.FolderPath = "//evil/A" }), "a.pdf", FieldFolderPath},
		{"folder backslash", with(func(t *Target) { t.FolderPath = `A\B` }), "a.pdf", FieldFolderPath},
		{"folder colon", with(func(t *Target) { t.FolderPath = "A:/content" }), "a.pdf", FieldFolderPath},
		{"folder control char", with(func(t *Target) { t.FolderPath = "A\nB" }), "a.pdf", FieldFolderPath},
		{"folder bidi override", with(func(t *Target) { t.FolderPath = "A\u202eB" }), "a.pdf", FieldFolderPath},
		{"folder reserved", with(func(t *Target) { t.FolderPath = "A/_vti_bin" }), "a.pdf", FieldFolderPath},
		{"folder too long", with(func(t *Target) { t.FolderPath = strings.Repeat("abcdefghi/", 40) + "x" }), "a.pdf", FieldFolderPath},
		{"file empty", ok, "", FieldFileName},
		{"file dotdot", ok, "..", FieldFileName},
		{"file with slash", ok, "a/b.pdf", FieldFileName},
		{"file question mark", ok, "a?.pdf", FieldFileName},
		{"file leading space", ok, " a.pdf", FieldFileName},
		{"file reserved", ok, "CON", FieldFileName},
		{"file invalid utf8", ok, "a\xff.pdf", FieldFileName},
		{"file too long", ok, strings.Repeat("x", 256), FieldFileName},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := cl.Validate(tc.target, tc.file)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindInvalid || e.Code != "invalid_sharepoint_target" {
				t.Fatalf("err = %v, want invalid_sharepoint_target", err)
			}
			if len(e.Fields) != 1 || e.Fields[0].Field != tc.field {
				t.Fatalf("fields %+v, want only %s", e.Fields, tc.field)
			}
		})
	}
}

func TestValidateReportsEveryField(t *testing.T) {
	t.Parallel()
	cl, err := NewClient(Config{TenantID: "t", ClientID: "id", ClientSecret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := apperr.As(cl.Validate(Target{SiteURL: "ftp://x", FolderPath: ".."}, ""))
	if e == nil || len(e.Fields) != 4 {
		t.Fatalf("want 4 fields, got %v", e)
	}
}

func TestEscapeSegment(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain-name_1.pdf": "plain-name_1.pdf",
		"a b":              "a%20b",
		"März":             "M%C3%A4rz",
		"#%+&=;,@'":        "%23%25%2B%26%3D%3B%2C%40%27",
		"日本":               "%E6%97%A5%E6%9C%AC",
	} {
		if got := escapeSegment(in); got != want {
			t.Errorf("escapeSegment(%q) = %q, want %q", in, got, want)
		}
	}
	if got := escapeID("contoso.sharepoint.com,ab-1,cd-2"); got != "contoso.sharepoint.com,ab-1,cd-2" {
		t.Errorf("escapeID kept %q", got)
	}
	if got := escapeID("b!x/y"); got != "b!x%2Fy" {
		t.Errorf("escapeID(b!x/y) = %q", got)
	}
}

func TestNewClientConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" = valid
	}{
		{"secret", Config{TenantID: "11111111-2222-3333-4444-555555555555", ClientID: "c", ClientSecret: "s"}, ""},
		{"credential", Config{Credential: &fakeCredential{}}, ""},
		{"both", Config{TenantID: "t", ClientID: "c", ClientSecret: "s", Credential: &fakeCredential{}}, "not both"},
		{"no tenant", Config{ClientID: "c", ClientSecret: "s"}, "TenantID"},
		{"tenant path", Config{TenantID: "t/../x", ClientID: "c", ClientSecret: "s"}, "TenantID"},
		{"no secret", Config{TenantID: "t", ClientID: "c"}, "ClientSecret"},
		{"http graph", Config{TenantID: "t", ClientID: "c", ClientSecret: "s", GraphBase: "http://graph.microsoft.com/v1.0"}, "GraphBase"},
		{"http authority", Config{TenantID: "t", ClientID: "c", ClientSecret: "s", AuthorityHost: "http://login"}, "AuthorityHost"},
		{"chunk not multiple", Config{TenantID: "t", ClientID: "c", ClientSecret: "s", ChunkSize: 1 << 20}, "ChunkSize"},
		{"chunk too big", Config{TenantID: "t", ClientID: "c", ClientSecret: "s", ChunkSize: MaxChunkSize + ChunkUnit}, "ChunkSize"},
		{"bad allowed host", Config{TenantID: "t", ClientID: "c", ClientSecret: "s", AllowedHosts: []string{"https://x"}}, "AllowedHosts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewClient(tc.cfg)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestConfigStringMasksSecret(t *testing.T) {
	t.Parallel()
	cfg := Config{TenantID: "t", ClientID: "c", ClientSecret: "very-secret-value"}
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), cfg.String()} {
		if strings.Contains(s, "very-secret-value") || !strings.Contains(s, "***") {
			t.Fatalf("config printed as %q", s)
		}
	}
}
