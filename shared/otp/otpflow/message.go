package otpflow

import (
	"html"
	"strconv"
	"strings"

	"github.com/esign-svc/esign/shared/i18n"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/otp"
)

// Purpose is what a code is for, as its message names it ("Your signing code for ...").
type Purpose string

const (
	Signing Purpose = "signing" // a signer's code (signing sessions, workflow participants)
	Access  Purpose = "access"  // a delivery recipient's code
)

// Message is the code's e-mail or SMS to t, in t's language (shared/i18n; English without one):
// the code, how long it is valid, the document's name and the purpose, nothing else (no link: a
// code message must not be a way into a session). The SMS is the e-mail's first paragraph; the
// e-mail adds what to do with a code nobody asked for. The document name is kept on one line
// (it is in the subject) and HTML-escaped in the HTML.
func Message(t Target, p Purpose, code string) notify.Message {
	lang := i18n.Normalize(t.Locale)
	doc := strings.Join(strings.Fields(t.DocumentName), " ")
	if doc == "" {
		doc = i18n.T(lang, "email.otp.yourDocument", nil)
	}
	purpose := "email.otp." + string(p)
	valid := i18n.T(lang, "email.otp.valid", map[string]string{"minutes": strconv.Itoa(int(otp.TTL.Minutes()))})
	text := i18n.T(lang, purpose+".is", map[string]string{"document": doc, "code": code}) + " " + valid
	m := notify.Message{Channel: t.Channel, Kind: notify.KindOTP, To: t.To, Text: text, CorrelationID: t.CorrelationID}
	if t.Channel == notify.SMS {
		return m
	}
	unasked := i18n.T(lang, "email.otp.unasked", nil)
	m.Subject = i18n.T(lang, purpose+".subject", map[string]string{"document": doc})
	m.Text += "\n\n" + unasked + "\n"
	// the subject's words with the document's name in bold: the name is put in after escaping
	const mark = "\x00"
	intro := strings.Replace(html.EscapeString(i18n.T(lang, purpose+".subject", map[string]string{"document": mark})), mark,
		"<strong>"+html.EscapeString(doc)+"</strong>", 1)
	if lang == "" {
		lang = i18n.Default
	}
	m.HTML = `<!doctype html><html lang="` + lang + `" dir="` + i18n.Dir(lang) + `"><body style="font-family:sans-serif">` +
		"<p>" + intro + ":</p>" +
		`<p style="font-size:24px;letter-spacing:4px"><strong>` + html.EscapeString(code) + "</strong></p>" +
		"<p>" + html.EscapeString(valid) + "</p>" +
		`<p style="color:#555">` + html.EscapeString(unasked) + "</p></body></html>\n"
	return m
}
