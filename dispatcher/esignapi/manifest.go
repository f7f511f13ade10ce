package esignapi

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pdf/stamp"
)

// Limits of what create reads to find a manifest.
const (
	maxTemplateBytes = 64 << 20
	maxManifestBytes = 1 << 20
	maxPDFBytes      = 256 << 20
)

// resolveManifest checks the PDF against pdfHash and finds the session's field manifest
// (DESIGN 6a): from the template package when templatePath is given, else from
// "<pdf>.manifest.json" stored beside the rendered PDF, else from the PDF's own esign.* fields
// (the PDF is then read once, hashed and parsed from the same bytes); with none, signatures go
// on an appended page.
func (a *API) resolveManifest(ctx context.Context, src blobstore.Path, templatePath, pdfHash string) ([]esign.ManifestField, string, error) {
	if templatePath != "" {
		if _, err := a.checkHash(ctx, src, pdfHash, false); err != nil {
			return nil, "", err
		}
		m, err := a.templateManifest(ctx, templatePath)
		return m, esign.ManifestFromTemplate, err
	}
	raw, err := a.readBlob(ctx, src.Container, src.Name+".manifest.json", maxManifestBytes)
	switch {
	case err == nil:
		var doc struct {
			Fields []esign.ManifestField `json:"fields"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, "", apperr.Invalid("manifest_invalid", apperr.Field("pdfBlobPath", "the manifest stored beside the PDF is not valid JSON"))
		}
		if _, err := a.checkHash(ctx, src, pdfHash, false); err != nil {
			return nil, "", err
		}
		return doc.Fields, esign.ManifestFromRendered, nil
	case apperr.KindOf(err) != apperr.KindNotFound:
		return nil, "", err
	}
	pdf, err := a.checkHash(ctx, src, pdfHash, true)
	if err != nil {
		return nil, "", err
	}
	m, err := pdfManifest(pdf, "pdfBlobPath")
	if err != nil {
		return nil, "", err
	}
	if len(m) == 0 {
		return nil, esign.ManifestNone, nil
	}
	return m, esign.ManifestFromPDF, nil
}

// templateManifest reads template.pdf of a template package: a ZIP blob, or a blob folder.
func (a *API) templateManifest(ctx context.Context, templatePath string) ([]esign.ManifestField, error) {
	p, err := blobstore.ParseFieldPath("templatePath", templatePath)
	if err != nil {
		return nil, err
	}
	if err := p.RequireContainer("templatePath", ContainerTemplates); err != nil {
		return nil, err
	}
	notFound := apperr.Invalid("template_not_found", apperr.Field("templatePath", "no template package at this path"))
	var pdf []byte
	if strings.HasSuffix(strings.ToLower(p.Name), ".zip") {
		raw, err := a.readBlob(ctx, p.Container, p.Name, maxTemplateBytes)
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
		pdf, err = a.readBlob(ctx, p.Container, strings.TrimSuffix(p.Name, "/")+"/template.pdf", maxPDFBytes)
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
		if f.UncompressedSize64 > maxPDFBytes {
			return nil, apperr.Invalid("template_invalid", apperr.Field("templatePath", "template.pdf is too large"))
		}
		rc, err := f.Open()
		if err != nil {
			return nil, apperr.Invalid("template_invalid", apperr.Field("templatePath", "template.pdf cannot be read"))
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, maxPDFBytes))
		if err != nil {
			return nil, apperr.Invalid("template_invalid", apperr.Field("templatePath", "template.pdf cannot be read"))
		}
		return b, nil
	}
	return nil, apperr.Invalid("template_invalid", apperr.Field("templatePath", "the template package holds no template.pdf"))
}

func pdfManifest(pdf []byte, field string) ([]esign.ManifestField, error) {
	fields, err := stamp.ManifestFromPDF(pdf)
	if err != nil {
		if e, ok := apperr.As(err); ok && e.Kind == apperr.KindInvalid {
			return nil, apperr.Invalid(pdfdoc.CodeUnreadable, apperr.Field(field, "the PDF cannot be read: "+e.Detail))
		}
		return nil, apperr.Invalid(pdfdoc.CodeUnreadable, apperr.Field(field, "the PDF cannot be read"))
	}
	out := make([]esign.ManifestField, 0, len(fields))
	for _, f := range fields {
		out = append(out, esign.ManifestField{Name: f.FullName, Role: f.Role, Kind: string(f.Kind), Page: f.Page,
			Rect: [4]float64{f.Rect.X1, f.Rect.Y1, f.Rect.X2, f.Rect.Y2}})
	}
	return out, nil
}

// readBlob reads a whole blob of at most limit bytes (413 beyond).
func (a *API) readBlob(ctx context.Context, container, name string, limit int64) ([]byte, error) {
	rc, props, err := a.Blobs.Open(ctx, container, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if props.Size > limit {
		return nil, apperr.New(apperr.KindTooLarge, "document_too_large", "the document is larger than %d bytes", limit)
	}
	return io.ReadAll(io.LimitReader(rc, limit))
}
