package browser

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify"
)

// passOTP asks for a code on the page, reads it from the signer's mailbox and enters it.
func (b *tab) passOTP(email string, n int) {
	b.t.Helper()
	b.click("#otp-send")
	b.run("code sent", chromedp.Poll(`document.getElementById("otp-status").textContent.includes("We sent")`, nil, chromedp.WithPollingTimeout(20*time.Second)))
	b.typeInto("#otp-code", otpCode(b.t, email, n))
	b.click("#otp-verify")
}

// readDocument waits for every page, then scrolls to the last one (the portal reports the
// document viewed once the last page is on screen).
func (b *tab) readDocument() int {
	b.t.Helper()
	var pages int
	b.run("document rendered", chromedp.WaitVisible(`#pages[data-rendered]`, chromedp.ByQuery),
		chromedp.Evaluate(`Number(document.getElementById("pages").dataset.rendered)`, &pages),
		chromedp.ScrollIntoView(`#pages .page:last-child`, chromedp.ByQuery),
		chromedp.WaitEnabled(`#consent-accept`, chromedp.ByQuery))
	return pages
}

// fillFields fills every field of the signer's list, by kind.
func (b *tab) fillFields() (n int) {
	b.t.Helper()
	var kinds []string
	b.eval(`[...document.querySelectorAll("#fields input")].map(i => i.id + ":" + i.dataset.kind)`, &kinds)
	for _, k := range kinds {
		id, kind, _ := strings.Cut(k, ":")
		switch kind {
		case "initials":
			b.typeInto("#"+id, "AB")
		case "text":
			b.typeInto("#"+id, "Filled in the browser")
		case "checkbox":
			b.click("#" + id)
		}
	}
	return len(kinds)
}

// consent ticks the three statements, each shown word for word as the service words it.
func (b *tab) consent() {
	b.t.Helper()
	for _, st := range esign.ConsentStatements {
		if got := b.text(`label[for="consent-` + st.ID + `"]`); got != st.Text {
			b.t.Fatalf("statement %s reads %q, want %q", st.ID, got, st.Text)
		}
		b.click("#consent-" + st.ID)
	}
	b.click("#consent-accept")
	b.wait("#consent-done")
}

// stroke is a signature's path across the pad, in page coordinates.
func stroke(ctx context.Context) ([][2]float64, error) {
	var box []float64
	if err := chromedp.Evaluate(`(r => [r.left, r.top, r.width, r.height])(document.getElementById("signature-pad").getBoundingClientRect())`, &box).Do(ctx); err != nil {
		return nil, err
	}
	var out [][2]float64
	for _, p := range [][2]float64{{.1, .6}, {.2, .3}, {.3, .7}, {.4, .35}, {.5, .65}, {.65, .3}, {.8, .6}, {.9, .4}} {
		out = append(out, [2]float64{box[0] + p[0]*box[2], box[1] + p[1]*box[3]})
	}
	return out, nil
}

// ink counts the pad's inked pixels (drawn, not the white ground Clear paints).
func (b *tab) ink() int {
	b.t.Helper()
	var n int
	b.eval(`(() => { const p = document.getElementById("signature-pad"), c = p.tagName === "CANVAS" ? p : p.querySelector("canvas");
  const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data; let n = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && d[i] + d[i + 1] + d[i + 2] < 600) n++; return n; })()`, &n)
	return n
}

// drawSignature drags a pointer (the mouse, or a pen with its pressure) across the pad as a
// person signing would.
func (b *tab) drawSignature(pointer input.DispatchMouseEventPointerType) {
	b.t.Helper()
	b.run("draw", chromedp.ScrollIntoView("#signature-pad", chromedp.ByQuery), chromedp.ActionFunc(func(ctx context.Context) error {
		pts, err := stroke(ctx)
		if err != nil {
			return err
		}
		if err := input.DispatchMouseEvent(input.MouseMoved, pts[0][0], pts[0][1]).WithPointerType(pointer).Do(ctx); err != nil {
			return err
		}
		for i, p := range pts {
			typ := input.MouseMoved
			if i == 0 {
				typ = input.MousePressed
			}
			if err := input.DispatchMouseEvent(typ, p[0], p[1]).WithButton(input.Left).WithButtons(1).WithClickCount(1).
				WithPointerType(pointer).WithForce(0.6).Do(ctx); err != nil {
				return err
			}
		}
		last := pts[len(pts)-1]
		return input.DispatchMouseEvent(input.MouseReleased, last[0], last[1]).WithButton(input.Left).WithClickCount(1).
			WithPointerType(pointer).Do(ctx)
	}))
}

// drawSignatureByTouch draws the same stroke with a finger (the tab emulates a touch screen).
func (b *tab) drawSignatureByTouch() {
	b.t.Helper()
	b.run("draw by touch", chromedp.ScrollIntoView("#signature-pad", chromedp.ByQuery), chromedp.ActionFunc(func(ctx context.Context) error {
		pts, err := stroke(ctx)
		if err != nil {
			return err
		}
		for i, p := range pts {
			typ := input.TouchMove
			if i == 0 {
				typ = input.TouchStart
			}
			if err := input.DispatchTouchEvent(typ, []*input.TouchPoint{{X: p[0], Y: p[1]}}).Do(ctx); err != nil {
				return err
			}
		}
		return input.DispatchTouchEvent(input.TouchEnd, []*input.TouchPoint{}).Do(ctx)
	}))
}

// signing is how one signer goes through the page.
type signing struct {
	OTPTo string // where the code goes: the e-mail address, or the phone number with SMS
	SMS   bool   // signer-choice: pick SMS on the page
	Typed bool   // sign with the typed name instead of a drawing
	Shots string // the screenshots' name ("" none)
}

// signAs walks one signer through the page: OTP, the document, fields, consents, signature.
func signAs(t *testing.T, link string, how signing) *tab {
	t.Helper()
	b := newTab(t)
	b.open(link)
	b.wait("#otp-form")
	if how.SMS {
		b.click(`input[name="otp-channel"][value="sms"]`)
	}
	if how.Shots != "" {
		b.shot(how.Shots + "-otp")
	}
	b.passOTP(how.OTPTo, 1)
	if pages := b.readDocument(); pages != 3 {
		t.Fatalf("the page shows %d pages, want 3", pages)
	}
	var boxes int
	b.eval(`document.querySelectorAll(".page .field-box").length`, &boxes)
	if boxes == 0 {
		t.Fatal("no field boxes over the pages")
	}
	if n := b.fillFields(); n == 0 {
		t.Fatal("no fields to fill in")
	}
	b.consent()
	if how.Typed {
		b.click("#sig-mode-type")
		var empty bool
		b.eval(`document.getElementById("signature-typed").value === ""`, &empty)
		if empty {
			t.Fatal("the typed signature is not prefilled with the name")
		}
	} else {
		// the mouse draws, Clear wipes it, and a pen signs
		b.drawSignature(input.Mouse)
		if b.ink() == 0 {
			t.Fatal("the mouse drew nothing on the pad")
		}
		b.click("#signature-clear")
		if n := b.ink(); n != 0 {
			t.Fatalf("Clear left %d inked pixels", n)
		}
		b.drawSignature(input.Pen)
		if b.ink() == 0 {
			t.Fatal("the pen drew nothing on the pad")
		}
	}
	if how.Shots != "" {
		b.shot(how.Shots + "-document")
	}
	b.click("#sign-submit")
	if h := b.endPage("signed"); !strings.Contains(h, "you have signed") {
		t.Fatalf("after signing the page says %q", h)
	}
	return b
}

// TestSequentialSigningWithOTP: two signers sign one after the other in the browser, the first
// with an e-mailed OTP and a drawn signature, the second choosing SMS for the OTP (signer-choice)
// and typing the signature; the session seals, pdfsig accepts the sealed PDF, and the
// processor's purge reaches the portal, which then holds nothing for the slots.
func TestSequentialSigningWithOTP(t *testing.T) {
	t.Parallel()
	buyer, seller := newEmail("buyer"), newEmail("seller")
	phone := fmt.Sprintf("+49151%08d", time.Now().UnixNano()%100000000)
	remember("phone number", phone)
	corr, created := createSigning(t, "sequential", 0,
		signer{Email: buyer, Role: "buyer", Name: "Bea Buyer", OTP: "email"},
		signer{Email: seller, Role: "seller", Name: "Sam Seller", OTP: "signer-choice", Phone: phone})
	first := linkIn(t, mail(t, buyer, notify.KindInvitation, 1)[0], "/sign?token=")

	signAs(t, first, signing{OTPTo: buyer, Shots: "sign"})
	slots, _ := created.JSON["slots"].([]any)
	if id, _ := slots[0].(map[string]any)["sessionId"].(string); !portal.Held(id) {
		t.Fatal("the portal does not hold the first signer's accepted signature")
	}
	second := linkIn(t, mail(t, seller, notify.KindInvitation, 1)[0], "/sign?token=")
	b := signAs(t, second, signing{OTPTo: phone, SMS: true, Typed: true, Shots: "sign-choice"})
	b.shot("sign-done")

	st := waitStatus(t, corr, 120*time.Second, "complete", func(r reply) bool {
		return r.str("state") == "complete" && r.str("signedDocumentPath") != ""
	})
	signed := download(t, st.str("signedDocumentPath"))
	path := filepath.Join(t.TempDir(), "signed.pdf")
	if err := os.WriteFile(path, signed, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("pdfsig", path).CombinedOutput() // exits 0 on a bad digest too: read it
	if !strings.Contains(string(out), "Signature is Valid.") || !strings.Contains(string(out), "Total document signed") {
		t.Fatalf("pdfsig on the sealed PDF:\n%s", out)
	}
	kinds := eventKinds(st)
	if kinds["slot.signed"] != 2 || kinds["slot.otp_verified"] < 2 {
		t.Errorf("audit events %v", kinds)
	}

	for _, e := range auditTrail(t, st.str("groupId")) {
		if e.Kind == "slot.signed" && (e.IP != "127.0.0.1" || !strings.Contains(e.UserAgent, "Chrome")) {
			t.Errorf("slot %d signed from %q, %q: want the browser's address and user agent as the portal saw them", e.Slot, e.IP, e.UserAgent)
		}
	}

	// The purge: the portal held each slot's accepted signature until the processor asked.
	for i, s := range slots {
		id, _ := s.(map[string]any)["sessionId"].(string)
		deadline := time.Now().Add(60 * time.Second)
		for portal.Held(id) {
			if time.Now().After(deadline) {
				t.Fatalf("the portal still holds slot %d's data a minute after the seal", i)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
}

func download(t testing.TB, path string) []byte {
	t.Helper()
	p, err := blobstore.ParsePath(path)
	if err != nil {
		t.Fatal(err)
	}
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.Azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	rc, _, err := blobstore.New(acct).Open(context.Background(), p.Container, p.Name)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
