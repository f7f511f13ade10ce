package stamp_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/internal/fixture"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

var update = flag.Bool("update", false, "rewrite examples/offer/template.pdf from fixture.OfferTemplate")

// offerTemplate reads the committed sample template.
func offerTemplate(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixture.RepoRoot(t), fixture.OfferPath))
	if err != nil {
		t.Fatalf("%v (generate it: go test ./shared/pdf/stamp -run TestOfferTemplate -update)", err)
	}
	return b
}

// formField is one AcroForm field as the committed file has it.
type formField struct {
	Name string
	Page int
	Type string
}

// formFields lists the top-level AcroForm fields of pdf with the page their /P names.
func formFields(t *testing.T, pdf []byte) []formField {
	t.Helper()
	d, err := pdfdoc.Open(pdf)
	if err != nil {
		t.Fatal(err)
	}
	pageNr := map[int]int{}
	for n := 1; n <= d.Ctx.PageCount; n++ {
		p, err := d.Page(n)
		if err != nil {
			t.Fatal(err)
		}
		pageNr[p.Ref.ObjectNumber.Value()] = n
	}
	cat, _, err := d.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	af, err := d.DerefDict(cat["AcroForm"])
	if err != nil || af == nil {
		return nil
	}
	v, _ := d.Deref(af["Fields"])
	arr, _ := v.(types.Array)
	var out []formField
	for _, o := range arr {
		f, err := d.DerefDict(o)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := f["T"].(types.StringLiteral)
		ft, _ := f["FT"].(types.Name)
		p, _ := f["P"].(types.IndirectRef)
		out = append(out, formField{Name: name.Value(), Page: pageNr[p.ObjectNumber.Value()], Type: ft.Value()})
	}
	return out
}

// TestOfferTemplate: the committed examples/offer/template.pdf is what fixture.OfferTemplate
// builds (-update rewrites it), and has exactly the sample's fields, on their pages.
func TestOfferTemplate(t *testing.T) {
	t.Parallel()
	built := fixture.OfferTemplate(t)
	if *update {
		if err := os.WriteFile(filepath.Join(fixture.RepoRoot(t), fixture.OfferPath), built, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	committed := offerTemplate(t)
	if !bytes.Equal(built, committed) {
		t.Errorf("%s differs from fixture.OfferTemplate; run go test ./shared/pdf/stamp -run TestOfferTemplate -update and commit it", fixture.OfferPath)
	}
	want := []formField{
		{"employeeName", 1, "Tx"}, {"employeeEmail", 1, "Tx"}, {"employeePhone", 1, "Tx"}, {"position", 1, "Tx"},
		{"salary", 1, "Tx"}, {"currency", 1, "Tx"}, {"esign.employee.initials.p1", 1, "Sig"},
		{"startDate", 2, "Tx"}, {"remote", 2, "Btn"}, {"notes", 2, "Tx"}, {"managerName", 2, "Tx"},
		{"esign.employee.initials.p2", 2, "Sig"},
		{"esign.employee.signature", 3, "Sig"}, {"esign.employee.date", 3, "Tx"},
		{"esign.hr.signature", 3, "Sig"}, {"esign.hr.date", 3, "Tx"},
	}
	got := formFields(t, committed)
	if !slices.Equal(got, want) {
		t.Fatalf("template fields:\n got %v\nwant %v", got, want)
	}
	d, err := pdfdoc.Open(committed)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.PageCount(); err != nil || n != 3 {
		t.Fatalf("template has %d pages (%v), want 3", n, err)
	}
}
