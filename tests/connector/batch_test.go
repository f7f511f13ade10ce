package connector

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/esign-svc/esign/connector/settings"
	"github.com/esign-svc/esign/devtools/devkeys"
)

// offersCSV writes n valid records of the sample package as CSV (salary a number, remote a
// boolean, the phone-like notes text).
func offersCSV(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"employeeName", "employeeEmail", "position", "salary", "currency", "startDate", "remote"})
	start := time.Now().AddDate(0, 1, 0).Format("2006-01-02")
	for i := range n {
		_ = w.Write([]string{fmt.Sprintf("Employee %d", i), fmt.Sprintf("employee%d@example.test", i), "Engineer",
			strconv.Itoa(50000 + i), "EUR", start, strconv.FormatBool(i%2 == 0)})
	}
	w.Flush()
	return writeFile(t, fmt.Sprintf("offers-%d.csv", n), []byte(b.String()))
}

// offersXLSX writes n valid records of the sample package as the first sheet of a workbook,
// numbers and booleans as text cells as a spreadsheet export has them.
func offersXLSX(t *testing.T, n int) string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	rows := [][]any{{"employeeName", "employeeEmail", "position", "salary", "currency", "startDate", "remote"}}
	start := time.Now().AddDate(0, 1, 0).Format("2006-01-02")
	for i := range n {
		rows = append(rows, []any{fmt.Sprintf("Employee %d", i), fmt.Sprintf("employee%d@example.test", i), "Engineer",
			strconv.Itoa(60000 + i), "EUR", start, "true"})
	}
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &r); err != nil {
			t.Fatal(err)
		}
	}
	p := writeFile(t, "offers.xlsx", nil)
	if err := f.SaveAs(p); err != nil {
		t.Fatal(err)
	}
	return p
}

type receipt struct {
	BatchID, State, DispatchReadiness string
	DocumentCount, ReadyCount         int
}

func submitted(t *testing.T, r result) receipt {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var rc receipt
	if err := json.Unmarshal([]byte(r.stdout), &rc); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if rc.State != "pending-approval" || rc.DispatchReadiness != "READY" || rc.ReadyCount != rc.DocumentCount {
		t.Fatalf("receipt %+v", rc)
	}
	return rc
}

func batchTotal(t *testing.T, set map[string]string) int {
	t.Helper()
	var l struct{ Total int }
	if err := json.Unmarshal([]byte(ok(t, set, "batch", "list", "--output", "json")), &l); err != nil {
		t.Fatal(err)
	}
	return l.Total
}

// TestCRMBatchThresholds: the crm profile submits up to service_batchwarningthreshold (25)
// records at once, asks for a confirmation from 26 to service_batchmaxthreshold (100) (--yes,
// or y at a terminal; refused without either) and refuses more; both thresholds are settings.
// Records come from CSV and XLSX. The batches are then read, decided by an approver, cancelled,
// and their receipt fetched.
//
// Not parallel: it counts the tenant's batches, which the other tests submitting batches
// (portal links, the ERP jobs) would change under it; Go runs it before any parallel test.
func TestCRMBatchThresholds(t *testing.T) {
	set := connSettings(t, nil)
	submit := func(set map[string]string, file, stdin string, interactive bool, extra ...string) result {
		args := append([]string{"render", "--profile", "crm", "--template", offerPath, "--data", file, "--approval",
			"--approver", "approver@example.test", "--output", "json"}, extra...)
		return svcconnect(t, set, stdin, interactive, args...)
	}
	before := batchTotal(t, set)

	r := submit(set, offersCSV(t, 101), "", false, "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "101 records: above service_batchmaxthreshold (100)") {
		t.Fatalf("101 records: exit %d %s", r.code, r.stderr)
	}
	thirty := offersCSV(t, 30)
	r = submit(set, thirty, "", false)
	if r.code != 1 || !strings.Contains(r.stderr, "above service_batchwarningthreshold (25), confirm with --yes") {
		t.Fatalf("30 records unconfirmed: exit %d %s", r.code, r.stderr)
	}
	r = submit(set, thirty, "n\n", true)
	if r.code != 1 || !strings.Contains(r.stderr, "Submit the batch? [y/N]") {
		t.Fatalf("30 records answered n: exit %d %s", r.code, r.stderr)
	}
	if got := batchTotal(t, set); got != before {
		t.Fatalf("refused submissions made batches: %d, was %d", got, before)
	}
	asked := submitted(t, submit(set, thirty, "y\n", true))
	confirmed := submitted(t, submit(set, thirty, "", false, "--yes"))
	atOnce := submitted(t, submit(set, offersCSV(t, 25), "", false))
	fromXLSX := submitted(t, submit(set, offersXLSX(t, 4), "", false))
	if fromXLSX.DocumentCount != 4 {
		t.Fatalf("XLSX batch of %d", fromXLSX.DocumentCount)
	}
	if asked.DocumentCount != 30 || confirmed.DocumentCount != 30 || atOnce.DocumentCount != 25 {
		t.Fatalf("counts %d %d %d", asked.DocumentCount, confirmed.DocumentCount, atOnce.DocumentCount)
	}
	// The thresholds are settings.
	low := connSettings(t, map[string]string{settings.KeyWarnThreshold: "2", settings.KeyMaxThreshold: "3"})
	if r := submit(low, offersCSV(t, 4), "", false, "--yes"); r.code != 1 || !strings.Contains(r.stderr, "above service_batchmaxthreshold (3)") {
		t.Fatalf("4 records over a max of 3: exit %d %s", r.code, r.stderr)
	}
	three := offersCSV(t, 3)
	if r := submit(low, three, "", false); r.code != 1 || !strings.Contains(r.stderr, "service_batchwarningthreshold (2)") {
		t.Fatalf("3 records over a warning of 2: exit %d %s", r.code, r.stderr)
	}
	small := submitted(t, submit(low, three, "", false, "--yes"))
	// Without --approval a batch is queued at once and processed; batch show --wait follows it
	// with a progress bar to its end.
	r = svcconnect(t, low, "", false, "render", "--template", offerPath, "--data", offersCSV(t, 2), "--output", "json")
	var auto receipt
	if err := json.Unmarshal([]byte(r.stdout), &auto); r.code != 0 || err != nil || auto.State != "queued" {
		t.Fatalf("a batch without approval: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = onTerminal(set, "batch", "show", auto.BatchID, "--wait", "--timeout", "3m")
	if r.code != 0 || !strings.Contains(r.stdout, "state:     completed") || !strings.Contains(r.stdout, "2 processed, 0 failed") ||
		!strings.Contains(r.stderr, "processed [##############################] 2/2") {
		t.Fatalf("batch show --wait: exit %d\n%s\n%q", r.code, r.stdout, r.stderr)
	}
	if got := batchTotal(t, set); got != before+6 {
		t.Fatalf("%d batches, want %d", got, before+6)
	}

	// Read, decide (the approver client; the submitter may not decide its own), cancel, receipt.
	out := ok(t, set, "batch", "show", asked.BatchID, "--records")
	if !strings.Contains(out, "state:     pending-approval") || strings.Count(out, "DISPATCH_READY") != 30 {
		t.Fatalf("batch show:\n%s", out)
	}
	if r := svcconnect(t, set, "", false, "batch", "decide", asked.BatchID, "--decision", "reject"); r.code != 1 || !strings.Contains(r.stderr, "403") {
		t.Fatalf("the submitter deciding: exit %d %s", r.code, r.stderr)
	}
	approver := connSettings(t, map[string]string{settings.KeyClientID: devkeys.DevApproverClientID})
	out = ok(t, approver, "batch", "decide", asked.BatchID, "--decision", "request-changes", "--comments", "Fix the start dates")
	if !strings.Contains(out, "changes-requested") {
		t.Fatalf("decide: %s", out)
	}
	out = ok(t, approver, "batch", "decide", confirmed.BatchID, "--decision", "reject", "--output", "json")
	if !strings.Contains(out, `"state": "rejected"`) {
		t.Fatalf("reject: %s", out)
	}
	for _, id := range []string{atOnce.BatchID, small.BatchID, fromXLSX.BatchID} {
		if out := ok(t, set, "batch", "cancel", id); !strings.Contains(out, "cancelled") {
			t.Fatalf("cancel: %s", out)
		}
	}
	if r := svcconnect(t, set, "", false, "batch", "cancel", confirmed.BatchID); r.code != 1 || !strings.Contains(r.stderr, "409 invalid_state") {
		t.Fatalf("cancelling a rejected batch: exit %d %s", r.code, r.stderr)
	}
	if out := ok(t, set, "batch", "list", "--state", "cancelled"); !strings.Contains(out, atOnce.BatchID) || !strings.Contains(out, small.BatchID) {
		t.Fatalf("list cancelled:\n%s", out)
	}
	pdf := writeFile(t, "receipt.pdf", nil)
	ok(t, set, "batch", "receipt", asked.BatchID, "--out", pdf)
	if b, err := os.ReadFile(pdf); err != nil || !strings.HasPrefix(string(b), "%PDF-") {
		t.Fatalf("receipt: %v %.20q", err, b)
	}
}
