package browser

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// tab is one page in a browser context of its own (storage not shared with other tabs).
type tab struct {
	t   *testing.T
	ctx context.Context
	bc  cdp.BrowserContextID
	// errors are the page's uncaught exceptions and console errors (CSP violations among them).
	errors []string
}

const stepTimeout = 60 * time.Second

func newTab(t *testing.T) *tab {
	t.Helper()
	// A browser context of its own, its tab in a new window: chromium no longer opens a tab of a
	// new context without one ("no browser is open"), which chromedp's WithNewBrowserContext does.
	exec := cdp.WithExecutor(browser, chromedp.FromContext(browser).Browser)
	bc, err := target.CreateBrowserContext().WithDisposeOnDetach(true).Do(exec)
	if err != nil {
		t.Fatalf("new browser context: %v", err)
	}
	id, err := target.CreateTarget("about:blank").WithBrowserContextID(bc).WithNewWindow(true).Do(exec)
	if err != nil {
		t.Fatalf("new tab: %v", err)
	}
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithTargetID(id))
	t.Cleanup(func() {
		cancel()
		_ = target.DisposeBrowserContext(bc).Do(exec)
	})
	tb := &tab{t: t, ctx: ctx, bc: bc}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *cdplog.EventEntryAdded:
			// A Content-Security-Policy violation is a security entry: the page tried to load or
			// run something the policy does not allow.
			if e.Entry.Source == cdplog.SourceSecurity || strings.Contains(e.Entry.Text, "Content Security Policy") {
				tb.errors = append(tb.errors, "security: "+e.Entry.Text)
			}
		case *network.EventRequestWillBeSent:
			// Nothing but the portal, the service and (downloads) storage: no third-party request.
			if u, err := url.Parse(e.Request.URL); err == nil && (u.Scheme == "http" || u.Scheme == "https") && !ownHost(u.Host) {
				tb.errors = append(tb.errors, "third-party request: "+e.Request.URL)
			}
		case *runtime.EventExceptionThrown:
			tb.errors = append(tb.errors, "exception: "+e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				tb.errors = append(tb.errors, "console: "+strings.Join(parts, " "))
			}
		}
	})
	if err := chromedp.Run(ctx, desktop()); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	t.Cleanup(func() {
		if len(tb.errors) > 0 && !t.Failed() {
			t.Errorf("the page logged errors:\n%s", strings.Join(tb.errors, "\n"))
		}
	})
	return tb
}

// ownHost reports whether host is the portal's, the service's or storage's (Azurite's blob
// endpoint, where a delivery's download URL points).
func ownHost(host string) bool {
	for _, own := range []string{portalURL, svc.Host.URL(), svc.Azurite.BlobEndpoint} {
		if u, err := url.Parse(own); err == nil && u.Host == host {
			return true
		}
	}
	return false
}

func desktop() chromedp.Action { return chromedp.EmulateViewport(1280, 900) }

// phoneScreen is phone with a touch screen.
func phoneScreen() chromedp.Action {
	return chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateTouch, func(p *emulation.SetDeviceMetricsOverrideParams, _ *emulation.SetTouchEmulationEnabledParams) {
		p.Mobile = true
	})
}

func phone() chromedp.Action {
	return chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), func(p *emulation.SetDeviceMetricsOverrideParams, _ *emulation.SetTouchEmulationEnabledParams) {
		p.Mobile = true
	})
}

// run runs the actions, failing the test with what it was doing.
func (b *tab) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\npage errors: %v\npage text: %s", what, err, b.errors, b.bodyText())
	}
}

func (b *tab) bodyText() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	var s string
	_ = chromedp.Run(ctx, chromedp.Evaluate(`document.body ? document.body.innerText : ""`, &s))
	if len(s) > 2000 {
		s = s[:2000]
	}
	return s
}

func (b *tab) open(url string) { b.run("open "+url, chromedp.Navigate(url)) }

// text waits for sel to be visible and answers its text.
func (b *tab) text(sel string) string {
	b.t.Helper()
	var s string
	b.run("read "+sel, chromedp.WaitVisible(sel, chromedp.ByQuery), chromedp.Text(sel, &s, chromedp.ByQuery))
	return s
}

func (b *tab) click(sel string) {
	b.t.Helper()
	b.run("click "+sel, chromedp.WaitVisible(sel, chromedp.ByQuery), chromedp.WaitEnabled(sel, chromedp.ByQuery), chromedp.Click(sel, chromedp.ByQuery))
}

func (b *tab) typeInto(sel, value string) {
	b.t.Helper()
	b.run("type into "+sel, chromedp.WaitVisible(sel, chromedp.ByQuery), chromedp.SendKeys(sel, value, chromedp.ByQuery))
}

func (b *tab) wait(sel string) {
	b.t.Helper()
	b.run("wait for "+sel, chromedp.WaitVisible(sel, chromedp.ByQuery))
}

func (b *tab) eval(js string, out any) {
	b.t.Helper()
	b.run("evaluate "+js, chromedp.Evaluate(js, out))
}

// endPage waits for the page's end state and answers its heading.
func (b *tab) endPage(kind string) string {
	b.t.Helper()
	return b.text(fmt.Sprintf(`section[data-end=%q] h1`, kind))
}

// a11yProblems lists what the page shown lacks for assistive technology: a form control
// without a label, a button without a name, an image without alt text, a page without a
// language or without exactly one h1, a text below WCAG AA contrast.
const a11yProblems = `(() => {
  const out = [];
  if (!document.documentElement.lang) out.push("html has no lang");
  const h1 = [...document.querySelectorAll("main h1")].filter(h => h.offsetParent !== null);
  if (h1.length !== 1) out.push(h1.length + " visible h1 in main");
  for (const c of document.querySelectorAll("input, select, textarea")) {
    if (c.type === "hidden" || c.offsetParent === null) continue;
    if (!(c.labels && c.labels.length) && !c.getAttribute("aria-label") && !c.getAttribute("aria-labelledby")) out.push("unlabelled " + c.tagName + "#" + c.id);
  }
  for (const b of document.querySelectorAll("button")) {
    if (b.offsetParent !== null && !b.textContent.trim() && !b.getAttribute("aria-label")) out.push("button without a name");
  }
  for (const i of document.querySelectorAll("img")) if (!i.hasAttribute("alt")) out.push("img without alt");
  // WCAG 2.1 AA contrast of every visible text: 4.5:1, 3:1 for large text (24px, or 18.66px
  // bold); disabled controls are exempt, as WCAG says; the background is the nearest opaque one.
  const rgba = c => (c.match(/[\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0);
  const bg = e => {
    for (; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] === 1)) return c;
    }
    return [255, 255, 255];
  };
  for (const e of document.querySelectorAll("body *")) {
    if (e.offsetParent === null || e.closest(":disabled, [aria-disabled=true], .textLayer, canvas")) continue;
    if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    const st = getComputedStyle(e), fg = rgba(st.color);
    if (fg.length === 4 && fg[3] === 0) continue;
    const [l1, l2] = [lum(fg), lum(bg(e))].sort((a, b) => b - a), ratio = (l1 + 0.05) / (l2 + 0.05);
    const size = parseFloat(st.fontSize), large = size >= 24 || (size >= 18.66 && Number(st.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) out.push("contrast " + ratio.toFixed(2) + " of " + e.tagName + " \"" + e.textContent.trim().slice(0, 30) + "\"");
  }
  return out;
})()`

// shot checks the page shown for a11yProblems and writes full-page screenshots of it at desktop
// and phone width.
func (b *tab) shot(name string) {
	b.t.Helper()
	var problems []string
	b.eval(a11yProblems, &problems)
	if len(problems) > 0 {
		b.t.Errorf("page %s: %s", name, strings.Join(problems, "; "))
	}
	for _, v := range []struct {
		suffix string
		size   chromedp.Action
	}{{"desktop", desktop()}, {"phone", phone()}} {
		var png []byte
		b.run("screenshot "+name, v.size, chromedp.Sleep(300*time.Millisecond), chromedp.FullScreenshot(&png, 100))
		if err := os.WriteFile(filepath.Join(shotsDir, name+"-"+v.suffix+".png"), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	b.run("back to desktop", desktop())
}

// fill replaces an input's value by typing value into it.
func (b *tab) fill(sel, value string) {
	b.t.Helper()
	b.run("fill "+sel, chromedp.WaitVisible(sel, chromedp.ByQuery),
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).value = ""`, sel), nil), chromedp.SendKeys(sel, value, chromedp.ByQuery))
}

// chromedpSetSelect picks the option of a select by value, as a user choosing it would
// (the change event fires).
func chromedpSetSelect(sel, value string) chromedp.Action {
	return chromedp.Tasks{chromedp.WaitVisible(sel, chromedp.ByQuery), chromedp.Evaluate(fmt.Sprintf(
		`(s => { s.value = %q; s.dispatchEvent(new Event("change", {bubbles: true})); })(document.querySelector(%q))`, value, sel), nil)}
}

// waitText waits until the element sel exists and its text holds want.
func (b *tab) waitText(sel, want string) {
	b.t.Helper()
	js := fmt.Sprintf(`(e => !!e && e.textContent.includes(%q))(document.querySelector(%q))`, want, sel)
	b.run("wait for "+sel+" to read "+want, chromedp.Poll(js, nil, chromedp.WithPollingTimeout(30*time.Second)))
}

// TestA11yChecksCanFail: the page checks every browser test runs report a page that breaks
// them (grey text on white, an unlabelled input, two h1, no lang), and pass its fixed form.
func TestA11yChecksCanFail(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	page := func(html string) []string {
		b.open("data:text/html;charset=utf-8," + url.PathEscape(html))
		var problems []string
		b.eval(a11yProblems, &problems)
		return problems
	}
	bad := page(`<html><body><main><h1>A</h1><h1>B</h1><p style="color:#aaa;background:#fff">faint</p>` +
		`<input id="x"><button disabled style="color:#ccc">off</button></main></body></html>`)
	want := []string{"html has no lang", "2 visible h1 in main", "unlabelled INPUT#x", `contrast 2.32 of P "faint"`}
	if strings.Join(bad, "|") != strings.Join(want, "|") {
		t.Fatalf("problems %q, want %q", bad, want)
	}
	if good := page(`<html lang="en"><body><main><h1>A</h1><p style="color:#595959">readable</p>` +
		`<label for="x">X</label><input id="x"><p style="color:#767676;font-size:24px">large</p></main></body></html>`); len(good) != 0 {
		t.Fatalf("problems on a good page: %q", good)
	}
}
