package esign

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pdf/stamp"
)

// Limits of what create reads to find a manifest.
const (
	maxTemplateBytes = 64 << 20
	maxManifestBytes = 1 << 20
	MaxPDFBytes      = 256 << 20
)

// MetaManifest is the blob metadata key a rendered PDF carries when a field manifest is stored
// beside it: its value is the manifest blob's name in the same container. Create reads a
// stored manifest only when the PDF says it has one.
const MetaManifest = "esignmanifest"

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
		raw, _, err := c.Docs.ReadAll(ctx, src.Container, meta[MetaManifest], maxManifestBytes)
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

// templateManifest reads template.pdf of a template package: a ZIP blob, or a blob folder.
func (c *Creator) templateManifest(ctx context.Context, templatePath string) ([]ManifestField, error) {
	p, err := blobpath.ParseIn("templatePath", templatePath, ContainerTemplates)
	if err != nil {
		return nil, err
	}
	notFound := apperr.Invalid("template_not_found", apperr.Field("templatePath", "no template package at this path"))
	var pdf []byte
	if strings.HasSuffix(strings.ToLower(p.Name), ".zip") {
		raw, _, err := c.Docs.ReadAll(ctx, p.Container, p.Name, maxTemplateBytes)
		if apperr.KindOf(err) == apperr.KindNotFound {
			return nil, notFound
		}
		if err != nil {
			return nil, err
		}
		if pdf, err = templatePDFFromZip(raw); err != nil {
			return nil, err
		}
	} else {
		pdf, _, err = c.Docs.ReadAll(ctx, p.Container, strings.TrimSuffix(p.Name, "/")+"/template.pdf", MaxPDFBytes)
		if apperr.KindOf(err) == apperr.KindNotFound {
			return nil, notFound
		}
		if err != nil {
			return nil, err
		}
	}
	return pdfManifest(pdf, "templatePath")
}

func templatePDFFromZip(raw []byte) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return nil, apperr.Invalid("template_invalid", apperr.Field("templatePath", "the template package is not a ZIP file"))
	}
	for _, f := range zr.File {
		if path.Base(f.Name) != "template.pdf" || strings.Count(strings.Trim(f.Name, "/"), "/") > 1 {
			continue
		}
		if f.UncompressedSize64 > MaxPDFBytes {
			return nil, apperr.Invalid("template_invalid", apperr.Field("templatePath", "template.pdf is too large"))
		}
		rc, err := f.Open()
		if err != nil {
			return nil, apperr.Invalid("template_invalid", apperr.Field("templatePath", "template.pdf cannot be read"))
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, MaxPDFBytes))
		if err != nil {
			return nil, apperr.Invalid("template_invalid", apperr.Field("templatePath", "template.pdf cannot be read"))
		}
		return b, nil
	}
	return nil, apperr.Invalid("template_invalid", apperr.Field("templatePath", "the template package holds no template.pdf"))
}

func pdfManifest(pdf []byte, field string) ([]ManifestField, error) {
	fields, err := stamp.ManifestFromPDF(pdf)
	if err != nil {
		if e, ok := apperr.As(err); ok && e.Kind == apperr.KindInvalid {
			return nil, apperr.Invalid(pdfdoc.CodeUnreadable, apperr.Field(field, "the PDF cannot be read: "+e.Detail))
		}
		return nil, apperr.Invalid(pdfdoc.CodeUnreadable, apperr.Field(field, "the PDF cannot be read"))
	}
	out := make([]ManifestField, 0, len(fields))
	for _, f := range fields {
		out = append(out, ManifestField{Name: f.FullName, Role: f.Role, Kind: string(f.Kind), Page: f.Page,
			Rect: [4]float64{f.Rect.X1, f.Rect.Y1, f.Rect.X2, f.Rect.Y2}})
	}
	return out, nil
}
