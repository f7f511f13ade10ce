package graph

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/text"
)

// Target is the request's sharePointTarget.
//
//   - SiteURL: https://{tenant}.sharepoint.com/sites/{site} (the site, not the library).
//   - LibraryPath: the document library, by display name ("Documents"), by URL name
//     ("Shared Documents"), or by server-relative path ("/sites/Legal/Shared Documents").
//   - FolderPath: folders inside the library, "/"-separated; empty means the library root.
//     Missing folders are created by Graph on upload.
type Target struct {
	SiteURL     string `json:"siteUrl"`
	LibraryPath string `json:"libraryPath"`
	FolderPath  string `json:"folderPath"`
}

// Field names used in validation errors.
const (
	FieldSiteURL     = "sharePointTarget.siteUrl"
	FieldLibraryPath = "sharePointTarget.libraryPath"
	FieldFolderPath  = "sharePointTarget.folderPath"
	// FieldFileName: the uploaded file's name is the delivery's documentName.
	FieldFileName = "documentName"
)

// maxPathChars is SharePoint Online's limit on a decoded item path inside the site.
const maxPathChars = 400

// site is a validated siteUrl: host plus server-relative path segments.
type site struct {
	host     string
	segments []string
}

// checked is a Target that passed Validate.
type checked struct {
	site    site
	library string
	folder  []string
	file    string
}

// Validate checks t and fileName without any I/O, collecting every problem into one
// apperr.Invalid (code `invalid_sharepoint_target`) whose fields name the part at fault.
func (c *Client) Validate(t Target, fileName string) error {
	_, err := c.check(t, fileName)
	return err
}

func (c *Client) check(t Target, fileName string) (checked, error) {
	var out checked
	var fields []apperr.FieldError
	fail := func(field, msg string) { fields = append(fields, apperr.Field(field, msg)) }

	if s, msg := c.hosts.parseSite(t.SiteURL); msg != "" {
		fail(FieldSiteURL, msg)
	} else {
		out.site = s
	}

	lib := strings.Trim(strings.TrimSpace(t.LibraryPath), "/")
	switch {
	case lib == "":
		fail(FieldLibraryPath, "is required")
	case strings.Contains(lib, "://"):
		fail(FieldLibraryPath, "must be a library name or server-relative path, not a URL")
	default:
		if msg := checkSegments(lib, false); msg != "" {
			fail(FieldLibraryPath, msg)
		}
		out.library = lib
	}

	folder, msg := splitFolder(t.FolderPath)
	if msg != "" {
		fail(FieldFolderPath, msg)
	}
	out.folder = folder

	if msg := checkName(fileName); msg != "" {
		fail(FieldFileName, msg)
	}
	out.file = fileName

	if len(fields) == 0 {
		total := utf8.RuneCountInString(strings.Join(append(append([]string{}, folder...), fileName), "/"))
		if total > maxPathChars {
			fail(FieldFolderPath, fmt.Sprintf("folder path and file name together must not exceed %d characters", maxPathChars))
		}
	}
	if len(fields) > 0 {
		return checked{}, apperr.Invalid("invalid_sharepoint_target", fields...)
	}
	return out, nil
}

// splitFolder turns folderPath into segments. One leading and one trailing "/" are tolerated;
// empty segments ("a//b"), "." and "..", URLs and characters SharePoint refuses are not.
func splitFolder(p string) ([]string, string) {
	if p == "" || p == "/" {
		return nil, ""
	}
	if strings.Contains(p, "://") || strings.HasPrefix(p, "//") {
		return nil, "must be a path inside the library, not a URL"
	}
	p = strings.TrimPrefix(p, "/")
	p = strings.TrimSuffix(p, "/")
	if msg := checkSegments(p, true); msg != "" {
		return nil, msg
	}
	return strings.Split(p, "/"), ""
}

func checkSegments(p string, strict bool) string {
	for _, seg := range strings.Split(p, "/") {
		if seg == "" {
			return "must not contain empty path segments"
		}
		if msg := checkName(seg); msg != "" && (strict || seg == "." || seg == "..") {
			return msg
		}
	}
	return ""
}

// reservedNames are names SharePoint Online refuses for files and folders.
var reservedNames = map[string]bool{
	".lock": true, "con": true, "prn": true, "aux": true, "nul": true, "desktop.ini": true,
	"com0": true, "com1": true, "com2": true, "com3": true, "com4": true, "com5": true,
	"com6": true, "com7": true, "com8": true, "com9": true, "lpt0": true, "lpt1": true,
	"lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true,
	"lpt8": true, "lpt9": true,
}

// checkName validates one file or folder name; "" means it is acceptable.
func checkName(n string) string {
	switch {
	case n == "":
		return "must not be empty"
	case n == "." || n == "..":
		return `must not contain "." or ".." segments`
	case !utf8.ValidString(n):
		return "must be valid UTF-8"
	case len(n) > 255:
		return "each name must be at most 255 bytes"
	case strings.TrimSpace(n) != n:
		return "names must not start or end with spaces"
	case strings.ContainsAny(n, `"*:<>?\|/`):
		return `names must not contain any of " * : < > ? \ | /`
	case strings.HasPrefix(n, "~$") || strings.Contains(strings.ToLower(n), "_vti_"):
		return `names must not start with "~$" or contain "_vti_"`
	case reservedNames[strings.ToLower(n)]:
		return "is a name SharePoint reserves"
	}
	if strings.ContainsFunc(n, text.Refused) {
		return "must not contain control, line-separator or bidirectional formatting characters"
	}
	return ""
}

// hostPolicy decides which siteUrl hosts are acceptable.
type hostPolicy struct {
	exact    map[string]bool
	suffixes []string
}

func newHostPolicy(allowed []string) (hostPolicy, error) {
	hp := hostPolicy{exact: map[string]bool{}, suffixes: []string{".sharepoint.com"}}
	for _, a := range allowed {
		a = strings.ToLower(strings.TrimSpace(a))
		switch {
		case a == "" || strings.ContainsAny(a, "/:@ ") || a == ".":
			return hp, fmt.Errorf("%q is not a host name or .suffix", a)
		case strings.HasPrefix(a, "."):
			hp.suffixes = append(hp.suffixes, a)
		default:
			hp.exact[a] = true
		}
	}
	return hp, nil
}

func (hp hostPolicy) allows(host string) bool {
	host = strings.ToLower(host)
	if hp.exact[host] {
		return true
	}
	for _, s := range hp.suffixes {
		if strings.HasSuffix(host, s) && len(host) > len(s) {
			return true
		}
	}
	return false
}

// parseSite checks a siteUrl; the message is "" when it is acceptable.
func (hp hostPolicy) parseSite(raw string) (site, string) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return site{}, "is required"
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return site{}, "must be an absolute https URL such as https://contoso.sharepoint.com/sites/Legal"
	}
	if u.Scheme != "https" {
		return site{}, "must use https"
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return site{}, "must not contain credentials, a query or a fragment"
	}
	if p := u.Port(); p != "" && p != "443" {
		return site{}, "must not name a port"
	}
	host := strings.ToLower(u.Hostname())
	if !hp.allows(host) {
		return site{}, "must be a SharePoint Online site (*.sharepoint.com)"
	}
	s := site{host: host}
	path := strings.TrimSuffix(u.Path, "/")
	if path == "" {
		return s, ""
	}
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return site{}, `must not contain empty, "." or ".." path segments`
		}
		s.segments = append(s.segments, seg)
	}
	return s, ""
}

// escapeSegment percent-encodes everything but RFC 3986 unreserved characters, so that
// spaces, "#", "%", "+", "&" and non-ASCII letters (as UTF-8) survive Graph's path addressing.
func escapeSegment(s string) string { return escape(s, "") }

// escapeID is for Graph ids, which carry "," (site ids) and "!" (drive ids) literally in
// the documentation's examples.
func escapeID(s string) string { return escape(s, ",!") }

func escape(s, keep string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func escapePath(segments []string) string {
	out := make([]string, len(segments))
	for i, s := range segments {
		out[i] = escapeSegment(s)
	}
	return strings.Join(out, "/")
}

// DeliveryTargets is delivery.Creator's CheckTarget on c's rules: nil when c is nil (a
// deployment without a document-library connection refuses modes sharepoint and both).
func DeliveryTargets(c *Client) func(delivery.Target, string) error {
	if c == nil {
		return nil
	}
	return func(t delivery.Target, name string) error {
		return c.Validate(Target{SiteURL: t.SiteURL, LibraryPath: t.LibraryPath, FolderPath: t.FolderPath}, name)
	}
}
