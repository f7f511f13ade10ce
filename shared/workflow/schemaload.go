package workflow

import (
	"context"
	"path"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/template"
)

// SchemaBlobs reads a schemaPath blob (*blobstore.Store).
type SchemaBlobs interface {
	ReadAll(ctx context.Context, container, name string, limit int64) ([]byte, map[string]string, error)
}

// Packages loads a template package (*template.Loader).
type Packages interface {
	Load(ctx context.Context, field, templatePath string) (*template.Package, error)
}

// SchemaOf is the workflow schema of pkg: the blob at schemaPath (templateSettings.workflow.
// schemaPath, under the templates container) when set, else the package's schema.yaml. Errors:
// 400 schema_invalid (no schema, too large, unparsable), template_not_found (no blob at
// schemaPath), the path's own; the blob store's.
func SchemaOf(ctx context.Context, blobs SchemaBlobs, pkg *template.Package, schemaPath string) (*Schema, error) {
	const field = "templateSettings.workflow.schemaPath"
	if schemaPath == "" {
		if pkg.Schema == nil {
			return nil, apperr.Invalid(CodeSchemaInvalid, apperr.Field("templatePath", "the package holds no schema.yaml and no schemaPath is set"))
		}
		return ParseSchema("templatePath", pkg.Schema)
	}
	p, err := blobpath.ParseIn(field, schemaPath, template.Container)
	if err != nil {
		return nil, err
	}
	raw, _, err := blobs.ReadAll(ctx, p.Container, p.Name, template.MaxSchemaBytes)
	switch apperr.KindOf(err) {
	case apperr.KindNotFound:
		return nil, apperr.Invalid(template.CodeNotFound, apperr.Field(field, "no schema at this path"))
	case apperr.KindTooLarge:
		return nil, apperr.Invalid(CodeSchemaInvalid, apperr.Field(field, "the schema is larger than 256 KiB"))
	}
	if err != nil {
		return nil, err
	}
	return ParseSchema(field, raw)
}

// PackageSchemaPath is the workflow.schemaPath of pkg's own template.yaml as the schemaPath
// SchemaOf reads (DESIGN 6a: `workflow: { schemaPath: schema.yaml }`, relative to the
// package): in a folder package, the blob <folder>/<schemaPath>; in a ZIP package, which keeps
// only its schema.yaml, "" for that file (the package's schema). A value starting with
// "templates/" is a blob path of the templates container, as before relative paths were read:
// returned as it is, for the caller to confine. field names the package (templatePath or
// templateId). Errors: 400 template_invalid naming field for a path that leaves the package
// (.., a leading /, a \) or a ZIP's file other than schema.yaml.
func PackageSchemaPath(field string, pkg *template.Package, schemaPath string) (string, error) {
	if schemaPath == "" || strings.HasPrefix(schemaPath, template.Container+"/") {
		return schemaPath, nil
	}
	bad := func(msg string) error {
		return apperr.Invalid(template.CodeInvalid, apperr.Field(field, "template.yaml workflow.schemaPath: "+msg))
	}
	rel := path.Clean(schemaPath)
	if strings.HasPrefix(schemaPath, "/") || strings.Contains(schemaPath, `\`) || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", bad("must name a file inside the package (relative to it, without ..), or a templates/ blob path")
	}
	if strings.HasSuffix(pkg.Path, "/") {
		return pkg.Path + rel, nil
	}
	if rel != template.FileSchema {
		return "", bad("a ZIP package's schema is its " + template.FileSchema)
	}
	return "", nil
}

// LoadSchema is the schema of w: its template package's, or its Setup.SchemaPath's.
func LoadSchema(ctx context.Context, pkgs Packages, blobs SchemaBlobs, w *Workflow) (*Schema, error) {
	pkg, err := pkgs.Load(ctx, "templatePath", w.TemplatePath)
	if err != nil {
		return nil, err
	}
	return SchemaOf(ctx, blobs, pkg, w.Setup.SchemaPath)
}
