// Package records reads the records of a render or a batch from a file: JSON (one object, or an
// array of objects), CSV (a header row, then one record a row) or XLSX (the first sheet, the same
// shape). A cell of CSV or XLSX is text, and the service checks types strictly, so a cell is read
// as: empty, left out; true or false, a boolean; a plain decimal number (no leading zero, no
// plus sign, so phone numbers and codes stay text), a number; else text. Columns named in
// Options.Text always stay text.
package records

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
)

// Record is one record.
type Record = map[string]any

// Options adjust reading.
type Options struct {
	// Text lists the columns (CSV, XLSX) whose cells are always text.
	Text []string
}

// Limits of a records file. A batch is at most 10,000 records in a body of at most 32 MiB (the
// service's own, shared/dispatch, DESIGN 9), so a file above them could never be sent; the
// others bound what reading a small file can cost (XLSX is a ZIP: its parts are counted as they
// are decompressed, so a zip bomb is refused after at most MaxXLSXPartBytes of work).
const (
	MaxFileBytes = 32 << 20 // the file, any format
	MaxRecords   = 10000    // records (rows after the header, or array items)
	MaxColumns   = 1000     // columns of a CSV or XLSX row
	MaxCellBytes = 32767    // one cell (Excel's own limit on a cell)
	MaxJSONDepth = 32       // nesting of objects and arrays in a JSON file

	MaxXLSXParts      = 1000     // entries of the ZIP
	MaxXLSXPartBytes  = 64 << 20 // one part, decompressed
	MaxXLSXTotalBytes = 96 << 20 // every part, decompressed
	// MaxXMLRunBytes bounds a tag or the text between two in an XML part: a cell of
	// MaxCellBytes, every byte escaped (&quot; is six), fits.
	MaxXMLRunBytes = 256 << 10
)

// ErrTooLarge is wrapped by every error of a limit above.
var ErrTooLarge = errors.New("over a limit")

func tooLarge(format string, a ...any) error {
	return fmt.Errorf("%s (%w)", fmt.Sprintf(format, a...), ErrTooLarge)
}

// ReadFile reads path by its extension (.json, .csv, .xlsx). single is true when a JSON file
// held one object (a one-record render) rather than an array. Errors name the file and the row
// (and column) or the problem.
func ReadFile(path string, o Options) (recs []Record, single bool, err error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".json" && ext != ".csv" && ext != ".xlsx" {
		return nil, false, fmt.Errorf("%s: the records file must end in .json, .csv or .xlsx", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b, err := readAtMost(f)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	switch ext {
	case ".json":
		recs, single, err = ReadJSON(b)
	case ".csv":
		recs, err = ReadCSV(bytes.NewReader(b), o)
	case ".xlsx":
		recs, err = ReadXLSX(bytes.NewReader(b), o)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return recs, single, nil
}

// readAtMost reads r whole, refusing more than MaxFileBytes.
func readAtMost(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, tooLarge("the file is larger than %d bytes (32 MiB)", MaxFileBytes)
	}
	return b, nil
}

// ReadJSON reads one object or an array of objects (at most MaxRecords, nested at most
// MaxJSONDepth deep, at most MaxFileBytes).
func ReadJSON(b []byte) ([]Record, bool, error) {
	if len(b) > MaxFileBytes {
		return nil, false, tooLarge("the file is larger than %d bytes (32 MiB)", MaxFileBytes)
	}
	if err := jsonDepth(b); err != nil {
		return nil, false, err
	}
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var r Record
		if err := decode(b, &r); err != nil {
			return nil, false, err
		}
		return []Record{r}, true, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if tok, err := d.Token(); err != nil || tok != json.Delim('[') {
		return nil, false, errors.New("the JSON must be an object or an array of objects")
	}
	var rs []Record
	for i := 0; d.More(); i++ {
		if i == MaxRecords {
			return nil, false, tooLarge("more than %d records (record %d)", MaxRecords, i)
		}
		var r Record
		if err := d.Decode(&r); err != nil {
			return nil, false, fmt.Errorf("record %d: %w", i, jsonErr(err))
		}
		if r == nil {
			return nil, false, fmt.Errorf("record %d is not an object", i)
		}
		rs = append(rs, r)
	}
	if _, err := d.Token(); err != nil {
		return nil, false, fmt.Errorf("the JSON does not parse: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, false, errors.New("the JSON has more after its array")
	}
	return rs, false, nil
}

func jsonErr(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return errors.New("not an object")
	}
	return fmt.Errorf("the JSON does not parse: %w", err)
}

// jsonDepth refuses JSON nested deeper than MaxJSONDepth (before any of it is decoded).
func jsonDepth(b []byte) error {
	depth, inString, escaped := 0, false, false
	for i, c := range b {
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > MaxJSONDepth {
				return tooLarge("the JSON is nested more than %d deep (at byte %d)", MaxJSONDepth, i)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("the JSON does not parse: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("the JSON has more after its object")
	}
	return nil
}

// ReadCSV reads a header row and records (at most MaxFileBytes, MaxRecords rows after the
// header, MaxColumns columns, MaxCellBytes a cell).
func ReadCSV(r io.Reader, o Options) ([]Record, error) {
	b, err := readAtMost(r)
	if err != nil {
		return nil, err
	}
	if err := csvColumns(b); err != nil {
		return nil, err
	}
	cr := csv.NewReader(bytes.NewReader(b))
	cr.FieldsPerRecord = 0
	var rows [][]string
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", len(rows)+1, err)
		}
		if err := checkRow(rows, row, strconv.Itoa); err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return fromRows(rows, o)
}

// csvColumns refuses a CSV row of more than MaxColumns cells before encoding/csv splits it
// (one line of commas would otherwise be millions of empty strings). Quotes are followed as
// RFC 4180 has them; a row the count gets wrong is one encoding/csv refuses.
func csvColumns(b []byte) error {
	row, cells, quoted := 1, 1, false
	for _, c := range b {
		switch {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == ',':
			if cells++; cells > MaxColumns {
				return tooLarge("row %d has more than %d columns", row, MaxColumns)
			}
		case c == '\n':
			row, cells = row+1, 1
		}
	}
	return nil
}

// checkRow refuses the row after rows (its number len(rows)+1) when it is over a limit;
// column names a column (1-based) as the format does.
func checkRow(rows [][]string, row []string, column func(int) string) error {
	n := len(rows) + 1
	if n > MaxRecords+1 {
		return tooLarge("row %d: more than %d rows after the header", n, MaxRecords)
	}
	if len(row) > MaxColumns {
		return tooLarge("row %d has %d columns, at most %d", n, len(row), MaxColumns)
	}
	for i, cell := range row {
		if len(cell) > MaxCellBytes {
			name := ""
			if len(rows) > 0 && i < len(rows[0]) {
				name = fmt.Sprintf(" (%q)", rows[0][i])
			}
			return tooLarge("row %d, column %s%s: the cell is %d bytes, at most %d", n, column(i+1), name, len(cell), MaxCellBytes)
		}
	}
	return nil
}

// ReadXLSX reads the first sheet: a header row and records, under the limits of a CSV and
// those of the ZIP (MaxXLSXParts parts, each at most MaxXLSXPartBytes and all at most
// MaxXLSXTotalBytes decompressed, counted as they are decompressed whatever the ZIP declares).
func ReadXLSX(r io.Reader, o Options) ([]Record, error) {
	b, err := readAtMost(r)
	if err != nil {
		return nil, err
	}
	if err := checkZip(b); err != nil {
		return nil, err
	}
	f, err := excelize.OpenReader(bytes.NewReader(b), excelize.Options{UnzipSizeLimit: MaxXLSXTotalBytes, UnzipXMLSizeLimit: 1 << 20})
	if err != nil {
		return nil, fmt.Errorf("not a readable XLSX workbook: %w", err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return nil, errors.New("the workbook has no sheet")
	}
	it, err := f.Rows(sheets[0])
	if err != nil {
		return nil, fmt.Errorf("sheet %q: %w", sheets[0], err)
	}
	defer it.Close()
	var rows [][]string
	for it.Next() {
		if len(rows) == MaxRecords+1 {
			return nil, tooLarge("sheet %q, row %d: more than %d rows after the header", sheets[0], len(rows)+1, MaxRecords)
		}
		row, err := it.Columns()
		if err != nil {
			return nil, fmt.Errorf("sheet %q, row %d: %w", sheets[0], len(rows)+1, err)
		}
		for len(row) > 0 && row[len(row)-1] == "" {
			row = row[:len(row)-1]
		}
		if err := checkRow(rows, row, columnName); err != nil {
			return nil, fmt.Errorf("sheet %q, %w", sheets[0], err)
		}
		rows = append(rows, row)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("sheet %q: %w", sheets[0], err)
	}
	for len(rows) > 0 && len(rows[len(rows)-1]) == 0 {
		rows = rows[:len(rows)-1]
	}
	return fromRows(rows, o)
}

func columnName(n int) string {
	s, err := excelize.ColumnNumberToName(n)
	if err != nil {
		return strconv.Itoa(n)
	}
	return s
}

// xmlRuns counts the bytes between one '<' or '>' and the next: a tag, or the text between two
// (a cell's value, or blanks). Over MaxXMLRunBytes it stops the copy: encoding/xml holds a
// token whole, so a part of blanks would otherwise cost its size, several times over.
type xmlRuns struct {
	run  int
	over bool
}

var errXMLRun = errors.New("an XML run over the limit")

func (x *xmlRuns) Write(p []byte) (int, error) {
	for _, c := range p {
		if c == '<' || c == '>' {
			x.run = 0
			continue
		}
		if x.run++; x.run > MaxXMLRunBytes {
			x.over = true
			return 0, errXMLRun
		}
	}
	return len(p), nil
}

// checkZip decompresses every part of the ZIP b to nowhere, counting: more than MaxXLSXParts
// parts, a part above MaxXLSXPartBytes or all above MaxXLSXTotalBytes is refused (a declared
// size above a limit at once, before any work). Memory stays that of one inflater.
func checkZip(b []byte) error {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return fmt.Errorf("not a readable XLSX workbook: %w", err)
	}
	if len(zr.File) > MaxXLSXParts {
		return tooLarge("the workbook has %d parts, at most %d", len(zr.File), MaxXLSXParts)
	}
	var total uint64
	for _, zf := range zr.File { // what the ZIP declares, before any work
		if zf.UncompressedSize64 > MaxXLSXPartBytes {
			return tooLarge("part %q is %d bytes decompressed, at most %d", zf.Name, zf.UncompressedSize64, MaxXLSXPartBytes)
		}
		if total += zf.UncompressedSize64; total > MaxXLSXTotalBytes {
			return tooLarge("the workbook is more than %d bytes decompressed (at part %q)", MaxXLSXTotalBytes, zf.Name)
		}
	}
	var inflated int64
	for _, zf := range zr.File { // what it holds, which archive/zip also holds to the declared
		rc, err := zf.Open()
		if err != nil {
			return fmt.Errorf("not a readable XLSX workbook: part %q: %w", zf.Name, err)
		}
		var w io.Writer = io.Discard
		xml := &xmlRuns{}
		if name := strings.ToLower(zf.Name); strings.HasSuffix(name, ".xml") || strings.HasSuffix(name, ".rels") {
			w = xml
		}
		n, err := io.Copy(w, io.LimitReader(rc, MaxXLSXPartBytes+1))
		rc.Close()
		if xml.over {
			return tooLarge("part %q has a run of text or a tag of more than %d bytes", zf.Name, MaxXMLRunBytes)
		}
		if err != nil {
			return fmt.Errorf("not a readable XLSX workbook: part %q: %w", zf.Name, err)
		}
		if n > MaxXLSXPartBytes {
			return tooLarge("part %q is more than %d bytes decompressed", zf.Name, MaxXLSXPartBytes)
		}
		if inflated += n; inflated > MaxXLSXTotalBytes {
			return tooLarge("the workbook is more than %d bytes decompressed (at part %q)", MaxXLSXTotalBytes, zf.Name)
		}
	}
	return nil
}

func fromRows(rows [][]string, o Options) ([]Record, error) {
	if len(rows) == 0 {
		return nil, errors.New("no header row")
	}
	head := rows[0]
	seen := map[string]bool{}
	for i, h := range head {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if h == "" {
			return nil, fmt.Errorf("header column %d is empty", i+1)
		}
		if seen[h] {
			return nil, fmt.Errorf("header column %q appears twice", h)
		}
		seen[h] = true
		head[i] = h
	}
	text := map[string]bool{}
	for _, t := range o.Text {
		text[t] = true
	}
	var out []Record
	for n, row := range rows[1:] {
		if len(row) > len(head) {
			return nil, fmt.Errorf("row %d has %d cells, the header %d", n+2, len(row), len(head))
		}
		rec := Record{}
		for i, cell := range row {
			if cell == "" {
				continue
			}
			rec[head[i]] = Cell(cell, text[head[i]])
		}
		if len(rec) > 0 {
			out = append(out, rec)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no records after the header row")
	}
	return out, nil
}

var plainNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`)

// Cell is a cell's value: a boolean, a number or text (always text when asText).
func Cell(s string, asText bool) any {
	if asText {
		return s
	}
	switch s {
	case "true", "TRUE", "True":
		return true
	case "false", "FALSE", "False":
		return false
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && plainNumber.MatchString(s) {
		return json.Number(s)
	}
	return s
}
