package pdf

import (
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

func classicPDF(t *testing.T) []byte {
	t.Helper()
	d := pdfdoc.New()
	if _, err := d.AppendPage(612, 792, []byte("0 0 1 rg 72 72 100 100 re f\n"), types.Dict{}); err != nil {
		t.Fatal(err)
	}
	b, err := d.Bytes(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
