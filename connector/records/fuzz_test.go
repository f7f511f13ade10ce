package records

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apptest/heaptest"
)

// within checks what every reader promises of its records: at most MaxRecords, each field a
// cell of at most MaxCellBytes (CSV, XLSX), none empty.
func within(t *testing.T, recs []Record, cells bool) {
	t.Helper()
	if len(recs) > MaxRecords {
		t.Fatalf("%d records", len(recs))
	}
	for i, r := range recs {
		if len(r) == 0 || cells && len(r) > MaxColumns {
			t.Fatalf("record %d has %d fields", i, len(r))
		}
		if !cells {
			continue
		}
		for k, v := range r {
			s, _ := v.(string)
			if n, ok := v.(json.Number); ok {
				s = string(n)
			}
			if len(k) > MaxCellBytes || len(s) > MaxCellBytes {
				t.Fatalf("record %d: a cell of %d bytes", i, len(s))
			}
		}
	}
}

// FuzzReadCSV: any input is records or an error, never a panic; cells stay cells (no
// amplification: what is allocated is linear in the input).
func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{"name,n\nAnn,1\n", "\ufeffa,b\n\"x,\ny\",2\n", "a\n\"", strings.Repeat(",", 5000), "a,a\n1,2\n", "a\n" + strings.Repeat("1\n", 20)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var recs []Record
		var err error
		n := heaptest.Allocated(func() { recs, err = ReadCSV(bytes.NewReader(b), Options{Text: []string{"a"}}) })
		if budget := 1<<20 + 64*uint64(len(b)); n > budget {
			t.Fatalf("%d bytes allocated for %d bytes of CSV (budget %d)", n, len(b), budget)
		}
		if err == nil {
			within(t, recs, true)
		}
	})
}

// FuzzReadJSON: any input is records or an error, never a panic; what is allocated is linear
// in the input.
func FuzzReadJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[{"a":"x"},{"b":[1,2,{"c":null}]}]`, `[1]`, `[{}]`, `[null]`, strings.Repeat("[", 100), `{"a":1} {"b":2}`, `[{"a":1}] x`, `["\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var recs []Record
		var single bool
		var err error
		n := heaptest.Allocated(func() { recs, single, err = ReadJSON(b) })
		if budget := 1<<20 + 128*uint64(len(b)); n > budget {
			t.Fatalf("%d bytes allocated for %d bytes of JSON (budget %d)", n, len(b), budget)
		}
		if err == nil {
			if single && len(recs) != 1 {
				t.Fatalf("one object read as %d records", len(recs))
			}
			if len(recs) > MaxRecords {
				t.Fatalf("%d records", len(recs))
			}
		}
	})
}

// xlsxBudget is what reading an XLSX may allocate: a base (excelize's own tables) plus a
// multiple of the parts' decompressed size, which the limits bound whatever the ZIP's
// compression ratio; a workbook refused by its ZIP check costs the base and its directory.
func xlsxBudget(b []byte) uint64 {
	budget := 16<<20 + 4*uint64(len(b))
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil || len(zr.File) > MaxXLSXParts {
		return budget
	}
	var total uint64
	for _, zf := range zr.File {
		total += min(zf.UncompressedSize64, MaxXLSXPartBytes+1)
	}
	return budget + 2*min(total, MaxXLSXTotalBytes+1)
}

// FuzzReadXLSX: any input is records or an error, never a panic, within xlsxBudget; zip bombs
// are in the kept corpus (testdata/fuzz/FuzzReadXLSX/zip-bomb-*). A workbook with a large part
// is TestXLSXBudget's (the fuzzer would spend its time inflating it).
func FuzzReadXLSX(f *testing.F) {
	f.Add(xlsx(f, [][]any{{"name", "n"}, {"Ann", 1}, {"Bo", "0042"}}))
	f.Add(withSheet(f, `<row r="1">`+inline("A1", "name")+inline("C1", "x")+`</row><row r="9">`+inline("B9", "y")+`</row>`))
	f.Add(withSheet(f, `<row r="1">`+inline("XFD1", "x")+`</row><row r="1048576"/>`))
	f.Add(zipBomb(f, "xl/worksheets/sheet1.xml", 1<<20, true))
	f.Add([]byte("PK\x05\x06\x00\x00\x00\x00\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var recs []Record
		var err error
		n := heaptest.Allocated(func() { recs, err = ReadXLSX(bytes.NewReader(b), Options{}) })
		if budget := xlsxBudget(b); n > budget {
			t.Fatalf("%d bytes allocated for %d bytes of XLSX (budget %d)", n, len(b), budget)
		}
		if err == nil {
			within(t, recs, true)
		}
	})
}

// TestXLSXBudget: a workbook whose sheet is 10,000 rows in 20 MiB of XML (mostly blanks: a
// few KB compressed) is read within xlsxBudget, the budget the fuzz target asserts.
func TestXLSXBudget(t *testing.T) {
	var sheet strings.Builder
	sheet.WriteString(`<row r="1">` + inline("A1", "name") + `</row>`)
	pad := strings.Repeat(" ", 2<<10)
	for i := 2; i <= MaxRecords+1; i++ {
		fmt.Fprintf(&sheet, `<row r="%d">%s%s</row>`, i, inline(fmt.Sprintf("A%d", i), "x"), pad)
	}
	b := withSheet(t, sheet.String())
	var recs []Record
	var err error
	n := heaptest.Allocated(func() { recs, err = ReadXLSX(bytes.NewReader(b), Options{}) })
	if err != nil || len(recs) != MaxRecords {
		t.Fatalf("%d records: %v", len(recs), err)
	}
	if budget := xlsxBudget(b); n > budget {
		t.Fatalf("%d bytes allocated, budget %d", n, budget)
	}
	t.Logf("%d bytes of XLSX, %d of sheet, %d allocated, budget %d", len(b), sheet.Len(), n, xlsxBudget(b))
}
