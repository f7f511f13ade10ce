package portal

import (
	"fmt"
	"html"
	"strings"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/otp"
)

// otpMessage is the OTP code e-mail or SMS: the code, how long it is valid and the document's
// name, nothing else (no link: a code mail must not be a way into the session).
func otpMessage(ch esign.OTPChannel, to, code, documentName, correlationID string) notify.Message {
	minutes := int(otp.TTL.Minutes())
	doc := strings.TrimSpace(documentName)
	if doc == "" {
		doc = "your document"
	}
	text := fmt.Sprintf("Your signing code for %s is %s. It is valid for %d minutes. Do not share it with anyone.",
		doc, code, minutes)
	m := notify.Message{Channel: notify.Email, Kind: notify.KindOTP, To: to, Text: text, CorrelationID: correlationID}
	if ch == esign.OTPSMS {
		m.Channel = notify.SMS
		return m
	}
	m.Subject = "Your signing code for " + doc
	m.HTML = fmt.Sprintf("<p>Your signing code for %s is</p><p style=\"font-size:24px;letter-spacing:4px\"><strong>%s</strong></p>"+
		"<p>It is valid for %d minutes. Do not share it with anyone.</p>", html.EscapeString(doc), code, minutes)
	return m
}
