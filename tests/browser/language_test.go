package browser

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/i18n"
	"github.com/esign-svc/esign/shared/notify"
)

// TestSigningInEachLanguage: four signers sign in English, German, French and Arabic (two
// parallel sessions). Each invitation is in the signer's language; the page is in it (lang,
// dir="rtl" for Arabic, the catalogue's texts, the consent statements verbatim in that
// language), passes the page checks and is photographed at phone and desktop width; the
// English signer switches the page to Arabic and back first. The sealed certificate shows each
// signer's accepted statements in the language accepted (pdftotext).
func TestSigningInEachLanguage(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{{"", "de"}, {"fr", "ar"}} {
		t.Run(pair[0]+"+"+pair[1], func(t *testing.T) {
			t.Parallel()
			buyer, seller := newEmail("buyer"), newEmail("seller")
			corr, _ := createSigning(t, "parallel", 0,
				signer{Email: buyer, Role: "buyer", Name: "Bea Buyer", Locale: pair[0]},
				signer{Email: seller, Role: "seller", Name: "Sam Seller", Locale: pair[1]})
			for i, who := range []string{buyer, seller} {
				lang := pair[i]
				if lang == "" {
					lang = "en"
				}
				inv := mail(t, who, notify.KindInvitation, 1)[0]
				wantSubject := i18n.T(lang, "email.invite.subject", map[string]string{"document": "Purchase agreement"})
				if inv.Subject != wantSubject || !strings.Contains(inv.Text, i18n.T(lang, "email.invite.openHere", nil)) {
					t.Errorf("%s invitation: subject %q, want %q; text:\n%s", lang, inv.Subject, wantSubject, inv.Text)
				}
				signIn(t, linkIn(t, inv, "/sign?token="), lang, pair[i] == "")
			}
			st := waitStatus(t, corr, 120*time.Second, "complete", func(r reply) bool {
				return r.str("state") == "complete" && r.str("signedDocumentPath") != ""
			})
			path := filepath.Join(t.TempDir(), "signed.pdf")
			if err := os.WriteFile(path, download(t, st.str("signedDocumentPath")), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("pdftotext", path, "-").Output()
			if err != nil {
				t.Fatalf("pdftotext: %v", err)
			}
			text, flat := string(out), strings.Join(strings.Fields(string(out)), " ")
			for _, l := range pair {
				if l == "" {
					l = "en"
				}
				named := i18n.T(l, "cert.consentLanguage", map[string]string{"language": i18n.T(l, "language.name", nil) + " (" + l + ")"})
				for _, want := range append([]string{named}, statementTexts(l)...) {
					if l == "ar" { // right to left: poppler reads each word back; check them all
						for _, w := range strings.Fields(want) {
							if w = strings.Trim(w, ".،:()"); !strings.Contains(text, w) {
								t.Errorf("the certificate lacks the Arabic word %q of %q", w, want)
							}
						}
						continue
					}
					if !strings.Contains(flat, want) {
						t.Errorf("the certificate lacks the %s text %q", l, want)
					}
				}
			}
		})
	}
}

// signIn signs on the page in lang: the page turns to the slot's language by itself; with
// switch, the signer first switches the page to Arabic and back with the language links.
func signIn(t *testing.T, link, lang string, switchFirst bool) {
	t.Helper()
	b := newTab(t)
	b.open(link)
	b.settle("the page in "+lang, `document.documentElement.lang === "`+lang+`" && !!document.querySelector("#pages[data-rendered]")`)
	if switchFirst {
		b.click(`nav.languages a[data-lang="ar"]`)
		b.settle("switched to Arabic", `document.documentElement.lang === "ar" && document.documentElement.dir === "rtl" && !!document.querySelector("#pages[data-rendered]")`)
		if got, want := b.text("#consent-title"), i18n.T("ar", "sign.consent.title", nil); got != want {
			t.Errorf("after switching to Arabic the consent heading reads %q, want %q", got, want)
		}
		b.click(`nav.languages a[data-lang="en"]`)
		b.settle("switched back", `document.documentElement.lang === "en" && location.search.includes("lang=en") && !!document.querySelector("#pages[data-rendered]")`)
	}
	var dir string
	b.eval(`document.documentElement.dir`, &dir)
	if want := i18n.Dir(lang); dir != want {
		t.Errorf("%s page: dir %q, want %q", lang, dir, want)
	}
	b.readDocument()
	b.fillFields()
	for sel, key := range map[string]string{"#consent-title": "sign.consent.title", "#sign-title": "sign.signature.title",
		"#sign-submit": "sign.submit", "#decline-open": "sign.decline.open"} {
		if got, want := b.text(sel), i18n.T(lang, key, nil); got != want {
			t.Errorf("%s page: %s reads %q, want %q", lang, sel, got, want)
		}
	}
	for _, st := range esign.StatementsIn(lang) {
		if got := b.text(`label[for="consent-` + st.ID + `"]`); got != st.Text {
			t.Fatalf("%s page: statement %s reads %q, want %q", lang, st.ID, got, st.Text)
		}
		b.click("#consent-" + st.ID)
	}
	b.click("#consent-accept")
	b.wait("#consent-done")
	b.drawSignature(input.Pen)
	b.shot("sign-lang-" + lang)
	b.click("#sign-submit")
	if got, want := b.endPage("signed"), i18n.T(lang, "sign.thanks.title", nil); got != want {
		t.Fatalf("%s: after signing the page says %q, want %q", lang, got, want)
	}
}

// settle waits until js is true on the page, across the reloads a change of language makes
// (an evaluation in a page being replaced fails and is tried again).
func (b *tab) settle(what, js string) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		var ok bool
		err := chromedp.Run(ctx, chromedp.Evaluate(js, &ok))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: not reached (%v)\npage errors: %v\npage text: %s", what, err, b.errors, b.bodyText())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func statementTexts(lang string) []string {
	var out []string
	for _, s := range esign.StatementsIn(lang) {
		out = append(out, s.Text)
	}
	return out
}
