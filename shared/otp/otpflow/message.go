package otpflow

import (
	"fmt"
	"html"
	"strings"

	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/otp"
)

// Purpose is what a code is for, as its message names it ("Your signing code for ...").
type Purpose string

const (
	Signing Purpose = "signing" // a signer's code (signing sessions, workflow participants)
	Access  Purpose = "access"  // a delivery recipient's code
)

// Message is the code's e-mail or SMS to t: the code, how long it is valid, the document's name
// and the purpose, nothing else (no link: a code message must not be a way into a session). The
// SMS is the e-mail's first paragraph; the e-mail adds what to do with a code nobody asked for.
// The document name is kept on one line (it is in the subject) and HTML-escaped in the HTML.
func Message(t Target, p Purpose, code string) notify.Message {
	doc := strings.Join(strings.Fields(t.DocumentName), " ")
	if doc == "" {
		doc = "your document"
	}
	minutes := int(otp.TTL.Minutes())
	text := fmt.Sprintf("Your %s code for %s is %s. It is valid for %d minutes. Do not share it with anyone.", p, doc, code, minutes)
	m := notify.Message{Channel: t.Channel, Kind: notify.KindOTP, To: t.To, Text: text, CorrelationID: t.CorrelationID}
	if t.Channel == notify.SMS {
		return m
	}
	const unasked = "If you did not ask for it, ignore this e-mail."
	m.Subject = fmt.Sprintf("Your %s code for %s", p, doc)
	m.Text += "\n\n" + unasked + "\n"
	m.HTML = fmt.Sprintf("<!doctype html><html><body style=\"font-family:sans-serif\">"+
		"<p>Your %s code for <strong>%s</strong> is</p>"+
		"<p style=\"font-size:24px;letter-spacing:4px\"><strong>%s</strong></p>"+
		"<p>It is valid for %d minutes. Do not share it with anyone.</p>"+
		"<p style=\"color:#555\">%s</p></body></html>\n",
		html.EscapeString(string(p)), html.EscapeString(doc), html.EscapeString(code), minutes, unasked)
	return m
}
