package records

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

var want = []Record{
	{"name": "Ann", "salary": json.Number("72000.5"), "remote": true, "phone": "+447700900123", "code": "0042"},
	{"name": "Bo", "salary": json.Number("0"), "remote": false, "zip": "01234"},
}

// TestFormats: the same records from CSV, XLSX and JSON; cells typed as the service checks
// them (numbers, booleans) and phone numbers and codes with a leading zero kept as text; an
// empty cell left out.
func TestFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "r.csv")
	csv := "\ufeffname,salary,remote,phone,code,zip\nAnn,72000.5,true,+447700900123,0042,\nBo,0,FALSE,,,01234\n"
	if err := os.WriteFile(csvPath, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	xlsxPath := filepath.Join(dir, "r.xlsx")
	f := excelize.NewFile()
	rows := [][]any{{"name", "salary", "remote", "phone", "code", "zip"}, {"Ann", "72000.5", "true", "+447700900123", "0042"}, {"Bo", "0", "false", "", "", "01234"}}
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &r); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SaveAs(xlsxPath); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "r.json")
	if err := os.WriteFile(jsonPath, []byte(`[{"name":"Ann","salary":72000.5,"remote":true,"phone":"+447700900123","code":"0042"},{"name":"Bo","salary":0,"remote":false,"zip":"01234"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{csvPath, xlsxPath, jsonPath} {
		got, single, err := ReadFile(p, Options{})
		if err != nil || single || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %v %v\n got %#v\nwant %#v", filepath.Ext(p), single, err, got, want)
		}
	}
	got, _, err := ReadFile(csvPath, Options{Text: []string{"salary"}})
	if err != nil || got[0]["salary"] != "72000.5" {
		t.Fatalf("a text column: %#v %v", got, err)
	}
}

// TestOneRecordAndErrors: a JSON object is one record; bad files are refused with the reason.
func TestOneRecordAndErrors(t *testing.T) {
	t.Parallel()
	recs, single, err := ReadJSON([]byte(` {"a": 1}`))
	if err != nil || !single || len(recs) != 1 {
		t.Fatalf("%v %v %v", recs, single, err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{
		"dup.csv":    "a,a\n1,2\n",
		"empty.csv":  "a,b\n",
		"wide.csv":   "a\n1,2\n",
		"bad.json":   "[1, 2]",
		"bad.xlsx":   "not a zip",
		"records.tx": "a\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadFile(p, Options{}); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(err.Error(), name) {
			t.Errorf("%s: the error does not name the file: %v", name, err)
		}
	}
}
