package records

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// xlsx is a workbook of rows (the first sheet).
func xlsx(t testing.TB, rows [][]any) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := sw.SetRow(cell, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withSheet is a workbook whose first sheet's XML is <sheetData> holding rows (raw XML).
func withSheet(t testing.TB, rows string) []byte {
	t.Helper()
	base := xlsx(t, [][]any{{"x"}})
	zr, err := zip.NewReader(bytes.NewReader(base), int64(len(base)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, zf := range zr.File {
		w, _ := zw.Create(zf.Name)
		if zf.Name == "xl/worksheets/sheet1.xml" {
			io.WriteString(w, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`+rows+`</sheetData></worksheet>`)
			continue
		}
		rc, _ := zf.Open()
		io.Copy(w, rc)
		rc.Close()
	}
	zw.Close()
	return b.Bytes()
}

func inline(ref, v string) string {
	return `<c r="` + ref + `" t="inlineStr"><is><t>` + v + `</t></is></c>`
}

// zipBomb is a ZIP whose one part, named name, is n zero bytes decompressed (a few KB
// compressed); lying declares its size as 1 KB.
func zipBomb(t testing.TB, name string, n int64, lying bool) []byte {
	t.Helper()
	var raw bytes.Buffer
	fw, _ := flate.NewWriter(&raw, flate.BestCompression)
	zeros := make([]byte, 1<<20)
	crc := crc32.NewIEEE()
	for left := n; left > 0; left -= int64(len(zeros)) {
		chunk := zeros[:min(left, int64(len(zeros)))]
		fw.Write(chunk)
		crc.Write(chunk)
	}
	fw.Close()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	size := uint64(n)
	if lying {
		size = 1024
	}
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc.Sum32(),
		CompressedSize64: uint64(raw.Len()), UncompressedSize64: size})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(raw.Bytes())
	zw.Close()
	return b.Bytes()
}

// TestLimits: every limit is refused with a message that names the file, and the row and
// column where there is one; the error wraps ErrTooLarge.
func TestLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cell := strings.Repeat("x", MaxCellBytes+1)
	var many strings.Builder
	many.WriteString("a\n")
	for i := range MaxRecords + 1 {
		fmt.Fprintf(&many, "%d\n", i)
	}
	var manyJSON strings.Builder
	manyJSON.WriteString("[")
	for i := range MaxRecords + 1 {
		if i > 0 {
			manyJSON.WriteString(",")
		}
		manyJSON.WriteString(`{"a":1}`)
	}
	manyJSON.WriteString("]")
	manyRows := make([][]any, MaxRecords+2)
	for i := range manyRows {
		manyRows[i] = []any{i}
	}
	wide := make([]any, MaxColumns+1)
	for i := range wide {
		wide[i] = fmt.Sprintf("c%d", i)
	}
	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"big.csv", bytes.Repeat([]byte("a\n"), MaxFileBytes/2+1), "the file is larger than 33554432 bytes"},
		{"big.json", append(append([]byte(`{"a":"`), bytes.Repeat([]byte("x"), MaxFileBytes)...), `"}`...), "the file is larger than 33554432 bytes"},
		{"rows.csv", []byte(many.String()), "row 10002: more than 10000 rows after the header"},
		{"columns.csv", []byte(strings.Repeat(",", MaxColumns) + "\n"), "row 1 has more than 1000 columns"},
		{"columns2.csv", []byte("a\n1\n" + strings.Repeat(",", 5*MaxColumns)), "row 3 has more than 1000 columns"},
		{"cell.csv", []byte("name,note\nAnn,\"" + cell + "\"\n"), `row 2, column 2 ("note"): the cell is 32768 bytes, at most 32767`},
		{"records.json", []byte(manyJSON.String()), "more than 10000 records (record 10000)"},
		{"deep.json", []byte(`[{"a":` + strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth) + "}]"), "the JSON is nested more than 32 deep"},
		{"rows.xlsx", xlsx(t, manyRows), `sheet "Sheet1", row 10002: more than 10000 rows after the header`},
		{"columns.xlsx", xlsx(t, [][]any{wide}), `sheet "Sheet1", row 1 has 1001 columns, at most 1000`},
		{"cell.xlsx", withSheet(t, `<row r="1">`+inline("A1", "name")+inline("B1", "note")+`</row><row r="2">`+inline("A2", "Ann")+inline("B2", cell)+`</row>`), `sheet "Sheet1", row 2, column B ("note"): the cell is 32768 bytes, at most 32767`},
		{"far.xlsx", withSheet(t, `<row r="1">`+inline("A1", "name")+`</row><row r="1048576">`+inline("A1048576", "x")+`</row>`), `sheet "Sheet1", row 10002: more than 10000 rows after the header`},
		{"farcolumn.xlsx", withSheet(t, `<row r="1">`+inline("A1", "name")+inline("XFD1", "x")+`</row>`), `sheet "Sheet1", row 1 has 16384 columns, at most 1000`},
		{"blanks.xlsx", withSheet(t, `<row r="1">`+inline("A1", "name")+`</row>`+strings.Repeat(" ", MaxXMLRunBytes+1)), `part "xl/worksheets/sheet1.xml" has a run of text or a tag of more than 262144 bytes`},
		{"bomb.xlsx", zipBomb(t, "xl/worksheets/sheet1.xml", MaxXLSXPartBytes+1, false), `part "xl/worksheets/sheet1.xml" is 67108865 bytes decompressed, at most 67108864`},
		{"lying.xlsx", zipBomb(t, "xl/worksheets/sheet1.xml", MaxXLSXPartBytes+1, true), "not a readable XLSX workbook"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if err := os.WriteFile(p, tc.body, 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := ReadFile(p, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), p+": ") {
				t.Fatalf("error %v, want %q after the file's name", err, tc.want)
			}
			if tc.name != "lying.xlsx" && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error %v does not wrap ErrTooLarge", err)
			}
		})
	}
	// At the limits, read.
	at := make([][]any, MaxRecords+1)
	for i := range at {
		at[i] = []any{i + 1}
	}
	at[0] = []any{"n"}
	if recs, err := ReadXLSX(bytes.NewReader(xlsx(t, at)), Options{}); err != nil || len(recs) != MaxRecords {
		t.Fatalf("%d rows: %v", len(recs), err)
	}
	if recs, err := ReadCSV(strings.NewReader("a,b\n\""+cell[1:]+"\","+strings.Repeat("1", 10)+"\n"), Options{}); err != nil || len(recs) != 1 {
		t.Fatalf("a cell of 32767 bytes: %v", err)
	}
	quoted := "a,b\n\"" + strings.Repeat(",\n", 2*MaxColumns) + "\",x\n"
	if recs, err := ReadCSV(strings.NewReader(quoted), Options{}); err != nil || len(recs) != 1 {
		t.Fatalf("commas in a quoted cell counted as columns: %v", err)
	}
}

// TestXLSXManyParts: a ZIP of more parts than MaxXLSXParts is refused before any is read.
func TestXLSXManyParts(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := range MaxXLSXParts + 1 {
		zw.Create(fmt.Sprintf("p%d", i))
	}
	zw.Close()
	if _, err := ReadXLSX(&b, Options{}); err == nil || !strings.Contains(err.Error(), "the workbook has 1001 parts, at most 1000") {
		t.Fatalf("error %v", err)
	}
}

// TestXLSXTotal: parts each under MaxXLSXPartBytes but above MaxXLSXTotalBytes together are
// refused by their declared sizes, before any is decompressed.
func TestXLSXTotal(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range []string{"xl/sharedStrings.xml", "xl/worksheets/sheet1.xml"} {
		w, _ := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Store, UncompressedSize64: MaxXLSXTotalBytes/2 + 1, CompressedSize64: 0})
		w.Write(nil)
	}
	zw.Close()
	_, err := ReadXLSX(&b, Options{})
	if want := `the workbook is more than 100663296 bytes decompressed (at part "xl/worksheets/sheet1.xml")`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
}

// TestZipBombMemory: a part that decompresses to far beyond the limit (declared or not) is
// refused having allocated a small fraction of it.
func TestZipBombMemory(t *testing.T) {
	for _, lying := range []bool{false, true} {
		bomb := zipBomb(t, "xl/worksheets/sheet1.xml", 4*MaxXLSXPartBytes, lying)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := ReadXLSX(bytes.NewReader(bomb), Options{})
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatal("a zip bomb was read")
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
			t.Fatalf("lying=%v: %d bytes allocated for a %d-byte bomb", lying, alloc, len(bomb))
		}
	}
}
