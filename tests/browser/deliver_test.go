package browser

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/esign-svc/esign/shared/notify"
)

// TestDeliveryWithOTP: the recipient opens the mailed link, sees the document's name and sender,
// passes the e-mailed OTP and downloads the PDF through the short-lived URL; the delivery then
// shows it opened and downloaded.
func TestDeliveryWithOTP(t *testing.T) {
	t.Parallel()
	path, _ := upload(t, "plain-1p.pdf")
	email := newEmail("recipient")
	corr := "browser-dlv-" + time.Now().Format("150405.000000")
	r := asInitiator(t, "POST", "delivery", map[string]any{"correlationId": corr, "documentId": "DOC-7",
		"documentName": "Statement 2026.pdf", "pdfBlobPath": path, "mode": "secure-email", "requireOtp": true,
		"requesterOrg": "Contoso Legal", "message": "Please find the statement attached.",
		"recipients": []any{map[string]any{"email": email, "name": "Rita Recipient", "role": "reader"}}})
	if r.Status != 201 {
		t.Fatalf("create delivery: %d %s", r.Status, r.Raw)
	}
	link := linkIn(t, mail(t, email, notify.Kind("delivery_invitation"), 1)[0], "/deliver/")

	b := newTab(t)
	dir := t.TempDir()
	b.run("allow downloads", chromedp.ActionFunc(func(ctx context.Context) error {
		return cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorAllow).WithDownloadPath(dir).
			WithBrowserContextID(b.bc).WithEventsEnabled(true).Do(cdp.WithExecutor(ctx, chromedp.FromContext(browser).Browser))
	}))
	b.open(link)
	if name := b.text("#doc-title"); name != "Statement 2026.pdf" {
		t.Fatalf("document name %q", name)
	}
	if from := b.text("#sender"); from != "Contoso Legal" {
		t.Fatalf("sender %q", from)
	}
	b.wait("#otp-form")
	b.shot("deliver-otp")
	b.passOTP(email, 1)
	b.wait("#download")
	b.shot("deliver-download")
	b.click("#download")
	b.run("download status", chromedp.WaitVisible(`#download-status[data-done]`, chromedp.ByQuery))

	var file string
	deadline := time.Now().Add(30 * time.Second)
	for file == "" {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".crdownload") {
				file = filepath.Join(dir, e.Name())
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no file downloaded into %s (page: %s)", dir, b.bodyText())
		}
		time.Sleep(200 * time.Millisecond)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := download(t, path)
	if !bytes.Equal(got, want) {
		t.Fatalf("downloaded %d bytes, not the delivered document (%d bytes)", len(got), len(want))
	}

	list := asInitiator(t, "GET", "delivery-sessions?correlationId="+url.QueryEscape(corr), nil)
	sessions, _ := list.JSON["sessions"].([]any)
	if len(sessions) != 1 {
		t.Fatalf("delivery sessions: %s", list.Raw)
	}
	s := sessions[0].(map[string]any)
	if s["openedAt"] == nil || s["downloadedAt"] == nil || s["otpVerified"] != true {
		t.Fatalf("the delivery does not show the access: %v", s)
	}
}
