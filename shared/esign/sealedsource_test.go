package esign

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// noDocs is a Documents where every blob is missing: a request that passes the path checks
// stops at pdf_not_found.
type noDocs struct{ reads []string }

func (d *noDocs) ReadAll(_ context.Context, container, name string, _ int64) ([]byte, map[string]string, error) {
	d.reads = append(d.reads, container+"/"+name)
	return nil, nil, apperr.New(apperr.KindNotFound, "blob_not_found", "no blob")
}

// A caller's request names its own folder of documents/ only (DESIGN 14); the workflow
// auto-trigger's Sealed request may name the tenant's own folder of signed/, and no other
// tenant's. A refused path is refused before any read, so another tenant's document and a
// missing one get the same answer.
func TestCreateConfinesTheSealedSourceToTheTenant(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		path   string
		sealed bool
		code   string // the expected error code
	}{
		{"caller, own documents folder", "documents/t1/rendered/a.pdf", false, "pdf_not_found"},
		{"caller, own uploads", "documents/t1/uploads/u.pdf", false, "pdf_not_found"},
		{"caller, another tenant's render", "documents/t2/rendered/a.pdf", false, "invalid_blob_path"},
		{"caller, documents root (pre-tenant layout)", "documents/rendered/a.pdf", false, "invalid_blob_path"},
		{"caller, tenant id as a prefix only", "documents/t1x/a.pdf", false, "invalid_blob_path"},
		{"caller, traversal out of the own folder", "documents/t1/../t2/a.pdf", false, "invalid_blob_path"},
		{"caller, wrong container", "templates/t1/a.pdf", false, "invalid_blob_path"},
		{"caller, deliveries container", "deliveries/t1/a.pdf", false, "invalid_blob_path"},
		{"caller, own signed folder", "signed/t1/workflows/w.pdf", false, "invalid_blob_path"},
		{"sealed, own signed folder", "signed/t1/workflows/w.pdf", true, "pdf_not_found"},
		{"sealed, own documents folder", "documents/t1/a.pdf", true, "pdf_not_found"},
		{"sealed, another tenant's documents", "documents/t2/a.pdf", true, "invalid_blob_path"},
		{"sealed, another tenant", "signed/t2/workflows/w.pdf", true, "invalid_blob_path"},
		{"sealed, signed root", "signed/workflows/w.pdf", true, "invalid_blob_path"},
		{"sealed, templates", "templates/a.pdf", true, "invalid_blob_path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var req CreateRequest
			if err := json.Unmarshal([]byte(validCreate), &req); err != nil {
				t.Fatal(err)
			}
			req.PDFBlobPath, req.Sealed = tc.path, tc.sealed
			docs := &noDocs{}
			_, err := (&Creator{Docs: docs}).Create(context.Background(), "t1", Actor{Kind: "system"}, req)
			e, ok := apperr.As(err)
			if !ok || e.Code != tc.code || len(e.Fields) != 1 || e.Fields[0].Field != "pdfBlobPath" {
				t.Fatalf("err = %v, want %s at pdfBlobPath", err, tc.code)
			}
			if read := len(docs.reads) > 0; read != (tc.code == "pdf_not_found") {
				t.Fatalf("reads %v: a refused path must not be read", docs.reads)
			}
		})
	}
}

// Sealed never comes from a request body.
func TestSealedIsNotDecoded(t *testing.T) {
	t.Parallel()
	var req CreateRequest
	if err := json.Unmarshal([]byte(`{"Sealed":true,"sealed":true}`), &req); err != nil || req.Sealed {
		t.Fatalf("Sealed = %v, %v", req.Sealed, err)
	}
}
