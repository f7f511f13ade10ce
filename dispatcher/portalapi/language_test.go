package portalapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/esign"
)

// TestViewAndConsentInTheSignersLanguage: the session view's statements are in the slot's
// locale, else the browser's language, unless the page asks for one (?lang=); the consent
// records the language and text the page showed.
func TestViewAndConsentInTheSignersLanguage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t, sessionOpts{slots: 2})
	e.update(t, f.s.GroupID, func(s *esign.Session, slots []esign.Slot) esign.Change {
		slots[0].Locale = "fr"
		return esign.Change{Slots: []int{0}}
	})
	lang := func(r reply) (string, string) {
		t.Helper()
		r.want(t, http.StatusOK, "")
		v := r.json(t)
		st, _ := v["consentStatements"].([]any)
		if len(st) != 3 {
			t.Fatalf("consentStatements %s", r.body)
		}
		first := st[0].(map[string]any)
		if first["language"] != v["language"] {
			t.Errorf("statement language %v, view language %v", first["language"], v["language"])
		}
		l, _ := v["language"].(string)
		text, _ := first["text"].(string)
		return l, text
	}
	r := e.do(t, http.MethodPost, PathActivate, "", `{"token":"`+f.links[0]+`"}`, "Accept-Language", "de-DE,de;q=0.9")
	if l, text := lang(r); l != "fr" || text != esign.StatementsIn("fr")[0].Text || r.json(t)["locale"] != "fr" {
		t.Fatalf("activate: language %q, text %q, locale %v: the slot's locale wins over the browser's", l, text, r.json(t)["locale"])
	}
	tok := r.json(t)["accessToken"].(string)
	if l, _ := lang(e.do(t, http.MethodGet, PathSession+"?lang=ar", tok, "")); l != "ar" {
		t.Errorf("?lang=ar: %q", l)
	}
	if l, _ := lang(e.do(t, http.MethodGet, PathSession+"?lang=xx", tok, "")); l != "fr" {
		t.Errorf("?lang=xx: %q, want the slot's", l)
	}
	e.do(t, http.MethodPost, PathViewed, tok, "").want(t, http.StatusOK, "")
	ids := `"statements":["document_reviewed","electronic_signature","legally_binding"],"version":"` + esign.ConsentVersion + `"`
	r = e.do(t, http.MethodPost, PathConsent, tok, `{`+ids+`,"language":"Arabic"}`)
	if r.status != http.StatusBadRequest || r.code(t) != "invalid_request" || !hasField(r.json(t), "language") {
		t.Fatalf("bad language: %d %s", r.status, r.body)
	}
	e.do(t, http.MethodPost, PathConsent, tok, `{`+ids+`,"language":"ar"}`).want(t, http.StatusOK, "")
	_, slots := e.load(t, f.s.GroupID)
	ar := esign.StatementsIn("ar")
	for i, c := range slots[0].Consents {
		if c.Language != "ar" || c.Text != ar[i].Text {
			t.Errorf("consent %d: %+v, want the Arabic text", i, c)
		}
	}
	// A slot without a locale: the browser's language, else English.
	if l, _ := lang(e.do(t, http.MethodPost, PathActivate, "", `{"token":"`+f.links[1]+`"}`, "Accept-Language", "de-CH, en;q=0.5")); l != "de" {
		t.Errorf("no locale, Accept-Language de-CH: %q", l)
	}
}

func hasField(problem map[string]any, field string) bool {
	errs, _ := problem["errors"].([]any)
	for _, e := range errs {
		if m, _ := e.(map[string]any); m["field"] == field {
			return true
		}
	}
	return false
}

// TestOTPInTheSignersLanguage: the code's e-mail is in the slot's locale.
func TestOTPInTheSignersLanguage(t *testing.T) {
	t.Parallel()
	o := newOTPEnv(t)
	f, tok := o.otpSession(t, esign.OTPEmail, false)
	o.update(t, f.s.GroupID, func(s *esign.Session, slots []esign.Slot) esign.Change {
		slots[0].Locale = "fr"
		return esign.Change{Slots: []int{0}}
	})
	o.send(t, tok, "").want(t, http.StatusOK, "")
	m := o.email.last(t)
	if m.Subject != "Votre code de signature pour "+f.s.DocumentID || !strings.Contains(m.Text, "Il est valable 10 minutes.") {
		t.Fatalf("code e-mail %q:\n%s", m.Subject, m.Text)
	}
}
