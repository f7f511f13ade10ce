package browser

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/esign-svc/esign/shared/notify"
)

// TestDecline: the signer declines with a reason on the page; the session is cancelled with the
// reason on record, and the other signer's link then shows the cancelled page.
func TestDecline(t *testing.T) {
	t.Parallel()
	a, c := newEmail("decliner"), newEmail("other")
	corr, _ := createSigning(t, "parallel", 0,
		signer{Email: a, Role: "buyer", Name: "Dee Cliner"}, signer{Email: c, Role: "seller", Name: "Otto Other"})
	link := linkIn(t, mail(t, a, notify.KindInvitation, 1)[0], "/sign?token=")
	b := newTab(t)
	b.open(link)
	b.readDocument()
	// By keyboard alone: Enter on the button, Tab into the reason, Tab to Decline, Enter.
	b.run("open the decline box by keyboard", chromedp.Focus("#decline-open", chromedp.ByQuery), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible("#decline-reason", chromedp.ByQuery), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent("The price on page 2 is wrong."))
	var focused string
	b.eval(`document.activeElement.id`, &focused)
	if focused != "decline-reason" {
		t.Fatalf("Tab from the opened box went to %q, not the reason", focused)
	}
	b.shot("decline")
	b.run("decline by keyboard", chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter))
	if h := b.endPage("declined"); !strings.Contains(h, "declined") {
		t.Fatalf("after declining the page says %q", h)
	}
	b.shot("declined")

	st := sessionStatus(t, corr)
	if st.str("state") != "cancelled" {
		t.Fatalf("session state %q after a decline", st.str("state"))
	}
	if ev := eventOf(t, auditTrail(t, st.str("groupId")), "slot.declined"); ev.Data["reason"] != "The price on page 2 is wrong." {
		t.Errorf("slot.declined data %v, want the reason typed on the page", ev.Data)
	}
	other := newTab(t)
	other.open(linkIn(t, mail(t, c, notify.KindInvitation, 1)[0], "/sign?token="))
	if h := other.endPage("cancelled"); !strings.Contains(h, "cancelled") {
		t.Fatalf("the other signer's link says %q", h)
	}
}

// TestExpiredLink: a link opened after its session expired shows the expired page (the service
// answers 410). The session lives one minute; the test waits for it in parallel with the others.
func TestExpiredLink(t *testing.T) {
	t.Parallel()
	email := newEmail("late")
	_, created := createSigning(t, "parallel", 1, signer{Email: email, Role: "buyer", Name: "Lee Late"})
	link := linkIn(t, mail(t, email, notify.KindInvitation, 1)[0], "/sign?token=")
	until, err := time.Parse(time.RFC3339Nano, created.str("expiresAt"))
	if err != nil {
		t.Fatalf("expiresAt %q: %v", created.str("expiresAt"), err)
	}
	time.Sleep(time.Until(until) + 2*time.Second)
	b := newTab(t)
	b.open(link)
	if h := b.endPage("expired"); !strings.Contains(h, "expired") {
		t.Fatalf("the expired link says %q", h)
	}
	b.shot("expired")
}

// TestUsedAndReplacedLinks: an invitation link opens once: another browser gets the used-link
// page while the first keeps working after a reload; once the sender resends the invitation the
// old link shows the superseded page and the new one opens.
func TestUsedAndReplacedLinks(t *testing.T) {
	t.Parallel()
	email := newEmail("twice")
	corr, _ := createSigning(t, "parallel", 0, signer{Email: email, Role: "buyer", Name: "Tia Twice"})
	link := linkIn(t, mail(t, email, notify.KindInvitation, 1)[0], "/sign?token=")
	first := newTab(t)
	first.open(link)
	first.readDocument()

	second := newTab(t)
	second.open(link)
	if h := second.endPage("used"); !strings.Contains(h, "already used") {
		t.Fatalf("the used link says %q", h)
	}
	second.shot("link-used")

	first.open(link) // a reload: the page goes on with the access token it keeps for the tab
	first.readDocument()

	if r := asInitiator(t, "POST", "esign/session/"+corr+"/resend-invite", nil); r.Status != http.StatusOK {
		t.Fatalf("resend-invite: %d %s", r.Status, r.Raw)
	}
	fresh := linkIn(t, mail(t, email, notify.KindInvitation, 2)[1], "/sign?token=")
	third := newTab(t)
	third.open(link)
	if h := third.endPage("superseded"); !strings.Contains(h, "newer link") {
		t.Fatalf("the replaced link says %q", h)
	}
	third.shot("link-superseded")
	fourth := newTab(t)
	fourth.open(fresh)
	fourth.readDocument()
}
