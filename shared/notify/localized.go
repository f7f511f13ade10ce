package notify

import (
	"html"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/i18n"
)

// letter builds an e-mail to a signer, a recipient or a workflow participant in one language
// (DESIGN 18): every text comes from the shared/i18n catalogue; the values put into it are
// kept on one line where they may reach a header and HTML-escaped in the HTML part, which
// carries the language and its direction.
type letter struct {
	lang      string
	text, doc strings.Builder
}

func newLetter(lang string) *letter {
	if !i18n.Supports(lang) {
		lang = i18n.Default
	}
	return &letter{lang: lang}
}

// t is the catalogue's text of key in the letter's language.
func (l *letter) t(key string, vars map[string]string) string { return i18n.T(l.lang, key, vars) }

// greeting is "Hello {name}," or "Hello," without a name.
func (l *letter) greeting(name string) {
	if name = oneLine(name); name != "" {
		l.para(l.t("email.hello", map[string]string{"name": name}))
		return
	}
	l.para(l.t("email.helloAnon", nil))
}

// para is a paragraph.
func (l *letter) para(s string) {
	l.text.WriteString(s + "\n\n")
	l.doc.WriteString("<p>" + html.EscapeString(s) + "</p>\n")
}

// note is a paragraph in a quieter colour.
func (l *letter) note(s string) {
	l.text.WriteString(s + "\n\n")
	l.doc.WriteString(`<p style="color:#555">` + html.EscapeString(s) + "</p>\n")
}

// link is the text part's "intro\nhref" and the HTML part's link labelled label.
func (l *letter) link(intro, label, href string) {
	l.text.WriteString(intro + "\n" + href + "\n\n")
	l.doc.WriteString(`<p><a href="` + html.EscapeString(href) + `">` + html.EscapeString(label) + "</a></p>\n")
}

// quote is the sender's own message, verbatim, under a heading.
func (l *letter) quote(heading, msg string) {
	l.text.WriteString(heading + "\n" + msg + "\n\n")
	l.doc.WriteString("<p>" + html.EscapeString(heading) + "</p><blockquote>" + html.EscapeString(msg) + "</blockquote>\n")
}

// message is the e-mail to to with subject (kept on one line).
func (l *letter) message(kind Kind, to, subject string) Message {
	return Message{Channel: Email, Kind: kind, To: to, Subject: oneLine(subject), Text: strings.TrimRight(l.text.String(), "\n") + "\n",
		HTML: `<!doctype html><html lang="` + l.lang + `" dir="` + i18n.Dir(l.lang) + `"><body style="font-family:sans-serif">` + "\n" +
			l.doc.String() + "</body></html>\n"}
}

// expiry formats the end of a link's validity: in English words, else numerically (no month
// names to translate).
func expiry(lang string, at time.Time) string {
	if lang == i18n.Default || !i18n.Supports(lang) {
		return at.UTC().Format("2 January 2006 15:04 UTC")
	}
	return at.UTC().Format("2006-01-02 15:04 UTC")
}

// DeliveryInvitation is what a delivery recipient's invitation says.
type DeliveryInvitation struct {
	Locale   string // the recipient's language ("": English)
	Name     string // the recipient's name, optional
	Document string
	Org      string // the sender's organisation; empty: "A sender"
	Message  string // the sender's message, optional, verbatim
	Link     string
	Expires  time.Time
	Reminder bool // an automatic reminder of an unopened delivery (DESIGN 17)
}

// DeliveryInvitationMessage renders a delivery invitation e-mail of kind to the given address,
// in the recipient's language; a reminder says so in its subject and first paragraph.
func DeliveryInvitationMessage(kind Kind, to string, d DeliveryInvitation) Message {
	l := newLetter(d.Locale)
	doc, org := oneLine(d.Document), oneLine(d.Org)
	if org == "" {
		org = l.t("email.delivery.aSender", nil)
	}
	l.greeting(d.Name)
	which := "email.delivery."
	if d.Reminder {
		which = "email.delivery.remind."
	}
	l.para(l.t(which+"body", map[string]string{"org": org, "document": doc}))
	if d.Message != "" {
		l.quote(l.t("email.delivery.message", nil), d.Message)
	}
	l.link(l.t("email.delivery.openHere", nil), l.t("email.delivery.open", nil), d.Link)
	l.note(l.t("email.delivery.until", map[string]string{"date": expiry(l.lang, d.Expires)}) + " " + l.t("email.delivery.personal", nil))
	return l.message(kind, to, l.t(which+"subject", map[string]string{"document": doc}))
}

// WorkflowInvitation is what a workflow participant's e-mail says: an invitation to fill in
// the form, or a reviewer's request for changes.
type WorkflowInvitation struct {
	Locale  string
	Name    string
	Changes bool   // the changes requested, not the first invitation
	Org     string // the organisation's name, optional
	Message string // the organisation's message, optional, verbatim
	Link    string
}

// WorkflowInvitationMessage renders a workflow participant's e-mail of kind in the
// participant's language.
func WorkflowInvitationMessage(kind Kind, to string, w WorkflowInvitation) Message {
	l := newLetter(w.Locale)
	which := "invite"
	if w.Changes {
		which = "changes"
	}
	subject := l.t("email.workflow."+which+".subject", nil)
	l.greeting(w.Name)
	l.para(l.t("email.workflow."+which+".body", nil))
	if org := oneLine(w.Org); org != "" {
		l.para(l.t("email.workflow.from", map[string]string{"org": org}))
		subject += " (" + org + ")"
	}
	if w.Message != "" {
		l.para(w.Message)
	}
	l.link(l.t("email.workflow.open", nil), l.t("email.workflow.open", nil), w.Link)
	l.note(l.t("email.workflow.personal", nil))
	return l.message(kind, to, subject)
}
