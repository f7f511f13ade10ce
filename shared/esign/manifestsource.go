package esign

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pdf/stamp"
	"github.com/esign-svc/esign/shared/template"
)

// Limits of what create reads to find a manifest.
const (
	maxManifestBytes = 1 << 20
	MaxPDFBytes      = 256 << 20
)

// MetaManifest is the blob metadata key a rendered PDF carries when a field manifest is stored
// beside it: its value is the manifest blob's name in the same container. Create reads a
// stored manifest only when the PDF says it has one.
const MetaManifest = "esignmanifest"

// ManifestMeta is MetaManifest's value for the manifest blob name: each segment
// percent-encoded, since blob metadata holds printable ASCII only and a name may hold any letter
// (a batch record's file name). A name of ASCII letters, digits and . _ - / is its own value.
func ManifestMeta(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// manifest reads the PDF once, checks it against pdfHash, and finds the session's field
// manifest (DESIGN 6a): from the template package when templatePath is given, else from the
// manifest stored beside a rendered PDF (named by its MetaManifest metadata), else from the
// PDF's own esign.* fields (parsed from the bytes already read); with none, signatures go on an
// appended page.
func (c *Creator) manifest(ctx context.Context, src blobpath.Path, templatePath, pdfHash string) ([]ManifestField, string, error) {
	pdf, meta, err := c.Docs.ReadAll(ctx, src.Container, src.Name, MaxPDFBytes)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, "", apperr.Invalid(pdfdoc.CodeNotFound, apperr.Field("pdfBlobPath", "no blob at this path"))
	}
	if err != nil {
		return nil, "", err
	}
	if "sha256:"+sha256Hex(pdf) != pdfHash {
		return nil, "", apperr.Invalid("pdf_hash_mismatch", apperr.Field("pdfHash", "does not match the SHA-256 of the blob at pdfBlobPath"))
	}
	switch {
	case templatePath != "":
		m, err := c.templateManifest(ctx, templatePath)
		return m, ManifestFromTemplate, err
	case meta[MetaManifest] != "":
		name, err := url.PathUnescape(meta[MetaManifest])
		if err != nil {
			return nil, "", apperr.Invalid("manifest_invalid", apperr.Field("pdfBlobPath", "the manifest the PDF names is missing"))
		}
		raw, _, err := c.Docs.ReadAll(ctx, src.Container, name, maxManifestBytes)
		if err != nil {
			if apperr.KindOf(err) == apperr.KindNotFound {
				return nil, "", apperr.Invalid("manifest_invalid", apperr.Field("pdfBlobPath", "the manifest the PDF names is missing"))
			}
			return nil, "", err
		}
		var doc struct {
			Fields []ManifestField `json:"fields"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, "", apperr.Invalid("manifest_invalid", apperr.Field("pdfBlobPath", "the manifest stored beside the PDF is not valid JSON"))
		}
		return doc.Fields, ManifestFromRendered, nil
	}
	m, known := c.fields.get(pdfHash) // pdfHash is the verified SHA-256 of these bytes
	if !known {
		if m, err = pdfManifest(pdf, "pdfBlobPath"); err != nil {
			return nil, "", err
		}
		c.fields.put(pdfHash, m)
	}
	if len(m) == 0 {
		return nil, ManifestNone, nil
	}
	return m, ManifestFromPDF, nil
}

// Templates reads template packages: *template.Loader, the one package reader (DESIGN 6a).
type Templates interface {
	Load(ctx context.Context, field, templatePath string) (*template.Package, error)
}

// templateManifest is the field manifest of template.pdf in the package at templatePath.
// Errors: invalid_blob_path, template_not_found, template_invalid (Templates.Load's),
// pdf_unreadable, pdf_too_complex (past the parse budget, pdfdoc.Limits).
func (c *Creator) templateManifest(ctx context.Context, templatePath string) ([]ManifestField, error) {
	if c.Templates == nil {
		return nil, errors.New("esign: Creator.Templates is not set")
	}
	pkg, err := c.Templates.Load(ctx, "templatePath", templatePath)
	if err != nil {
		return nil, err
	}
	if m, ok := c.fields.get(pkg.PDFHash); ok {
		return m, nil
	}
	m, err := pdfManifest(pkg.PDF, "templatePath")
	if err != nil {
		return nil, err
	}
	c.fields.put(pkg.PDFHash, m)
	return m, nil
}

func pdfManifest(pdf []byte, field string) ([]ManifestField, error) {
	fields, err := stamp.ManifestFromPDF(pdf)
	if err != nil {
		if e, ok := apperr.As(err); ok && e.Code == pdfdoc.CodeTooComplex {
			return nil, apperr.Invalid(pdfdoc.CodeTooComplex, apperr.Field(field, e.Fields[0].Message))
		}
		if e, ok := apperr.As(err); ok && e.Kind == apperr.KindInvalid {
			return nil, apperr.Invalid(pdfdoc.CodeUnreadable, apperr.Field(field, "the PDF cannot be read: "+e.Detail))
		}
		return nil, apperr.Invalid(pdfdoc.CodeUnreadable, apperr.Field(field, "the PDF cannot be read"))
	}
	return ManifestOf(fields), nil
}

// ManifestOf is a session's field manifest of the esign.* fields a PDF had (stamp.Manifest,
// stamp.Fill).
func ManifestOf(fields []stamp.Field) []ManifestField {
	out := make([]ManifestField, 0, len(fields))
	for _, f := range fields {
		out = append(out, ManifestField{Name: f.FullName, Role: f.Role, Kind: string(f.Kind), Page: f.Page,
			Rect: [4]float64{f.Rect.X1, f.Rect.Y1, f.Rect.X2, f.Rect.Y2}})
	}
	return out
}
