package e2e

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestBatchFileNamesThroughTheAPI submits two batches through POST /api/render (an array
// dataSource) whose fileNameTemplate names each PDF by a field, with letters outside ASCII and
// without an index token; a second person approves each through the decide route, the
// processor under the local host runs them, and what they produced is read back: every record
// PDF named as the template writes it (no "_<n>", the letters kept), the second of two equal
// names "<name> (2).pdf"; the individual batch's ZIP holds those names in record order, each
// entry the record's PDF; the combined batch's combined.pdf holds the records in order, and
// its record named "combined" does not take the combined PDF's name.
func TestBatchFileNamesThroughTheAPI(t *testing.T) {
	t.Parallel()
	sealRequireTools(t)
	submitter := newPerson(t, tenantA, "submitter", "Esign.Initiator")
	approver := newPerson(t, tenantA, "approver", "Dispatch.Approver")
	pkg := uploadPackage(t, examplePackage(t))
	names := []string{"Zoë Ærø", "Jürgen Groß", "Zoë Ærø", "Ωmega Ça"}
	submit := func(mode string, names []string) string {
		recs := offers(len(names))
		for i, n := range names {
			recs[i]["employeeName"] = n
		}
		body := batchBody(pkg, recs, true)
		dist := body["templateSettings"].(map[string]any)["distribution"].(map[string]any)
		dist["mode"], dist["fileNameTemplate"] = mode, "Angebot {{employeeName}}"
		if mode == "individual" {
			dist["zipBundle"] = true
		}
		r := submitBatch(t, submitter, body, http.StatusAccepted)
		if r.str("state") != "pending-approval" {
			t.Fatalf("submitted: %s", r.Raw)
		}
		id := r.Header.Get("X-Service-BatchId")
		if d := decide(t, approver, id, "approve", ""); d.Status != http.StatusOK || d.str("state") != "queued" {
			t.Fatalf("approve: %d %s", d.Status, d.Raw)
		}
		return id
	}
	individual := submit("individual", names)
	combinedNames := []string{"combined", "Jürgen Groß", "jürgen groß"}
	combined := submit("combined", combinedNames)
	done := [2]reply{waitBatch(t, submitter, individual), waitBatch(t, submitter, combined)}
	for i, d := range done {
		if d.str("state") != "completed" {
			t.Fatalf("batch %d finished %s", i, d.Raw)
		}
	}

	// The individual batch: its records' names, then the ZIP.
	want := []string{"Angebot Zoë Ærø.pdf", "Angebot Jürgen Groß.pdf", "Angebot Zoë Ærø (2).pdf", "Angebot Ωmega Ça.pdf"}
	paths := recordPaths(t, submitter, individual)
	for i, p := range paths {
		if p != "documents/"+tenantA+"/dispatch/"+individual+"/"+want[i] {
			t.Fatalf("record %d at %q, want %q", i, p, want[i])
		}
	}
	bundle := done[0].str("bundlePath")
	if bundle != "bundles/"+tenantA+"/"+individual+".zip" {
		t.Fatalf("bundlePath %q", bundle)
	}
	raw, _ := sealDownload(t, bundle)
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil || len(zr.File) != len(want) {
		t.Fatalf("the ZIP: %v, %d entries", err, len(zr.File))
	}
	for i, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(rc)
		rc.Close()
		pdf, _ := sealDownload(t, paths[i])
		if f.Name != want[i] || !bytes.Equal(body, pdf) {
			t.Fatalf("ZIP entry %d %q (%d bytes), want %q (%d bytes)", i, f.Name, len(body), want[i], len(pdf))
		}
		if f.Flags&0x800 == 0 {
			t.Errorf("ZIP entry %d: the UTF-8 name flag is not set", i)
		}
		if text := pdfText(t, pdf); !strings.Contains(text, names[i]) {
			t.Errorf("record %d's PDF does not show %q", i, names[i])
		}
	}

	// The combined batch: record names beside combined.pdf, which holds the records in order.
	wantCombined := []string{"Angebot combined.pdf", "Angebot Jürgen Groß.pdf", "Angebot jürgen groß (2).pdf"}
	for i, p := range recordPaths(t, submitter, combined) {
		if p != "documents/"+tenantA+"/dispatch/"+combined+"/"+wantCombined[i] {
			t.Fatalf("combined batch record %d at %q, want %q", i, p, wantCombined[i])
		}
	}
	if got := done[1].str("combinedPath"); got != "documents/"+tenantA+"/dispatch/"+combined+"/combined.pdf" {
		t.Fatalf("combinedPath %q", got)
	}
	merged, _ := sealDownload(t, done[1].str("combinedPath"))
	text, at := pdfText(t, merged), -1
	for i, n := range combinedNames {
		next := strings.Index(text[at+1:], n)
		if next < 0 {
			t.Fatalf("combined.pdf does not show record %d (%q) after record %d", i, n, i-1)
		}
		at += 1 + next
	}
}

// recordPaths are a batch's records' pdfBlobPath, in index order.
func recordPaths(t *testing.T, by person, id string) []string {
	t.Helper()
	page := call(t, "GET", svc.url("dispatch/batch/"+id+"/records"), nil, by.h())
	list, _ := page.JSON["records"].([]any)
	out := make([]string, len(list))
	for i, x := range list {
		out[i], _ = x.(map[string]any)["pdfBlobPath"].(string)
	}
	if page.Status != http.StatusOK || len(out) == 0 {
		t.Fatalf("records: %d %s", page.Status, page.Raw)
	}
	return out
}
