// Package blobpath parses and confines the blob paths of requests ("<container>/<blob name>",
// DESIGN 1a and 3): pure functions, so that domain packages can check a path without a storage
// client.
package blobpath

import (
	"strings"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/text"
)

// CodeInvalidBlobPath is the code of every error ParsePath returns.
const CodeInvalidBlobPath = "invalid_blob_path"

// Containers the seal jobs write to (DESIGN 3): the signed PDFs and certificates, and the JSONL
// evidence bundles.
const (
	ContainerSigned   = "signed"
	ContainerEvidence = "evidence"
)

// MaxBlobNameLength is the service's limit on a blob name, in characters.
const MaxBlobNameLength = 1024

// Path is a blob path from a request, confined to one container of this account.
type Path struct {
	Container string
	Name      string
}

// String is the "<container>/<blob name>" form ParsePath accepts.
func (p Path) String() string { return p.Container + "/" + p.Name }

// ParsePath parses a request's "<container>/<blob name>" path, reporting errors against the
// field "path". See ParseFieldPath.
func ParsePath(s string) (Path, error) { return ParseFieldPath("path", s) }

// ParseFieldPath parses "<container>/<blob name>" from the request field named field and
// confines it: no leading '/', no scheme or absolute URL, no backslash, no empty, "." or ".."
// segment, no character shared/text refuses (controls, separators, bidi), a valid container name (3-63 lowercase letters, digits and
// single hyphens, starting and ending with a letter or digit) and a blob name of at most 1024
// characters. Every failure is an apperr.Invalid with code invalid_blob_path naming field; the
// message never echoes the path.
func ParseFieldPath(field, s string) (Path, error) {
	bad := func(msg string) (Path, error) {
		return Path{}, apperr.Invalid(CodeInvalidBlobPath, apperr.Field(field, msg))
	}
	switch {
	case s == "":
		return bad("is required")
	case !utf8.ValidString(s):
		return bad("must be valid UTF-8")
	case strings.HasPrefix(s, "/"):
		return bad("must not start with '/'; use <container>/<blob name>")
	case strings.Contains(s, "://") || hasScheme(s):
		return bad("must be <container>/<blob name>, not a URL")
	case strings.Contains(s, `\`):
		return bad("must not contain a backslash")
	}
	if strings.ContainsFunc(s, text.Refused) {
		return bad("must not contain control, line-separator or bidirectional formatting characters")
	}
	container, name, ok := strings.Cut(s, "/")
	if !ok || name == "" {
		return bad("must be <container>/<blob name>")
	}
	if !ValidContainerName(container) {
		return bad("container must be 3-63 lowercase letters, digits and single hyphens")
	}
	for _, seg := range strings.Split(name, "/") {
		switch seg {
		case "":
			return bad("must not contain an empty segment")
		case ".", "..":
			return bad("must not contain '.' or '..' segments")
		}
	}
	if utf8.RuneCountInString(name) > MaxBlobNameLength {
		return bad("blob name must be at most 1024 characters")
	}
	return Path{Container: container, Name: name}, nil
}

// RequireContainer answers an invalid_blob_path error against field unless the path is in one
// of the allowed containers.
func (p Path) RequireContainer(field string, allowed ...string) error {
	for _, c := range allowed {
		if p.Container == c {
			return nil
		}
	}
	return apperr.Invalid(CodeInvalidBlobPath, apperr.Field(field, "container must be one of: "+strings.Join(allowed, ", ")))
}

// hasScheme reports whether s begins like "scheme:" (a URL or a Windows drive letter).
func hasScheme(s string) bool {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return false
	}
	if j := strings.IndexByte(s, '/'); j >= 0 && j < i {
		return false // the colon is inside the blob name
	}
	return true
}

// ValidContainerName applies the service's container naming rules.
func ValidContainerName(s string) bool {
	if len(s) < 3 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// ParseIn parses the request field's path and confines it to one of the allowed containers.
// Errors: invalid_blob_path (400) naming field.
func ParseIn(field, s string, allowed ...string) (Path, error) {
	p, err := ParseFieldPath(field, s)
	if err != nil {
		return Path{}, err
	}
	if err := p.RequireContainer(field, allowed...); err != nil {
		return Path{}, err
	}
	return p, nil
}

// Request is a create request that names a source document: it checks itself, then fills in
// its defaults, and says which field holds the document's path.
type Request interface {
	Validate() error
	Normalize()
	Source() (field, path string)
}

// Accept validates r, fills in its defaults, and parses its source document's path confined to
// the allowed containers. Errors: r's validation errors; invalid_blob_path naming the field.
func Accept(r Request, allowed ...string) (Path, error) {
	if err := r.Validate(); err != nil {
		return Path{}, err
	}
	r.Normalize()
	field, path := r.Source()
	return ParseIn(field, path, allowed...)
}

// Tenant confines p to tenant when it lies in container: a path there must be under
// <container>/<tenant>/ (another tenant's document is refused whether it exists or not, so the
// answer reveals nothing); a path in another container is returned as it is. Errors: 400
// invalid_blob_path naming field.
func Tenant(field string, p Path, container, tenant string) (Path, error) {
	if p.Container == container && (tenant == "" || !strings.HasPrefix(p.Name, tenant+"/")) {
		return Path{}, apperr.Invalid(CodeInvalidBlobPath,
			apperr.Field(field, "a document in "+container+" must be under "+container+"/<your tenant id>/"))
	}
	return p, nil
}

// TenantName is the blob name of a tenant's object: "<tenant>/<parts...>", the one way every
// blob a tenant's request makes is named under its folder (DESIGN 14).
func TenantName(tenant string, parts ...string) string {
	return tenant + "/" + strings.Join(parts, "")
}
