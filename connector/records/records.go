// Package records reads the records of a render or a batch from a file: JSON (one object, or an
// array of objects), CSV (a header row, then one record a row) or XLSX (the first sheet, the same
// shape). A cell of CSV or XLSX is text, and the service checks types strictly, so a cell is read
// as: empty, left out; true or false, a boolean; a plain decimal number (no leading zero, no
// plus sign, so phone numbers and codes stay text), a number; else text. Columns named in
// Options.Text always stay text.
package records

import (
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

// ReadFile reads path by its extension (.json, .csv, .xlsx). single is true when a JSON file
// held one object (a one-record render) rather than an array. Errors name the file and the row
// or the problem.
func ReadFile(path string, o Options) (recs []Record, single bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return ReadJSON(b)
	case ".csv":
		recs, err = ReadCSV(bytes.NewReader(b), o)
	case ".xlsx":
		recs, err = ReadXLSX(bytes.NewReader(b), o)
	default:
		return nil, false, fmt.Errorf("%s: the records file must end in .json, .csv or .xlsx", path)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return recs, false, nil
}

// ReadJSON reads one object or an array of objects.
func ReadJSON(b []byte) ([]Record, bool, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var r Record
		if err := decode(b, &r); err != nil {
			return nil, false, err
		}
		return []Record{r}, true, nil
	}
	var rs []Record
	if err := decode(b, &rs); err != nil {
		return nil, false, errors.New("the JSON must be an object or an array of objects")
	}
	for i, r := range rs {
		if r == nil {
			return nil, false, fmt.Errorf("record %d is not an object", i)
		}
	}
	return rs, false, nil
}

func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("the JSON does not parse: %w", err)
	}
	return nil
}

// ReadCSV reads a header row and records.
func ReadCSV(r io.Reader, o Options) ([]Record, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 0
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	return fromRows(rows, o)
}

// ReadXLSX reads the first sheet: a header row and records.
func ReadXLSX(r io.Reader, o Options) ([]Record, error) {
	f, err := excelize.OpenReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a readable XLSX workbook: %w", err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return nil, errors.New("the workbook has no sheet")
	}
	rows, err := f.GetRows(sheets[0])
	if err != nil {
		return nil, err
	}
	return fromRows(rows, o)
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
