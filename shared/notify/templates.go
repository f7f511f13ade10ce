package notify

import (
	"bytes"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
)

// Invitation is everything a signer invitation may say (spec: the portal link, the signer's
// name and the document's name; the requester's names in the footer for auto-triggered sessions).
type Invitation struct {
	SignerName   string
	DocumentName string
	PortalURL    string
	Requester    string // requestedBy, optional
	Organization string // organizationName, optional
	Reminder     bool   // a resend
}

const invitationText = `{{if .SignerName}}Hello {{.SignerName}},{{else}}Hello,{{end}}

{{if .Reminder}}This is a new link to sign{{else}}You are invited to sign{{end}} the document "{{.DocumentName}}".

Open the document and sign it here:
{{.PortalURL}}

This link is personal and works once; do not forward it.
{{- if or .Requester .Organization}}

Requested by {{.Requester}}{{if and .Requester .Organization}}, {{end}}{{.Organization}}
{{- end}}
`

const invitationHTML = `<!doctype html><html><body style="font-family:sans-serif">
<p>{{if .SignerName}}Hello {{.SignerName}},{{else}}Hello,{{end}}</p>
<p>{{if .Reminder}}This is a new link to sign{{else}}You are invited to sign{{end}} the document <strong>{{.DocumentName}}</strong>.</p>
<p><a href="{{.PortalURL}}">Open the document and sign it</a></p>
<p style="color:#555">This link is personal and works once; do not forward it.</p>
{{if or .Requester .Organization}}<p style="color:#555">Requested by {{.Requester}}{{if and .Requester .Organization}}, {{end}}{{.Organization}}</p>{{end}}
</body></html>
`

var (
	invText = texttemplate.Must(texttemplate.New("inv").Parse(invitationText))
	invHTML = htmltemplate.Must(htmltemplate.New("inv").Parse(invitationHTML))
)

// InvitationMessage renders a signer invitation e-mail to the given address.
func InvitationMessage(to string, inv Invitation) (Message, error) {
	var t, h bytes.Buffer
	inv.SignerName = oneLine(inv.SignerName)
	inv.DocumentName = oneLine(inv.DocumentName)
	if err := invText.Execute(&t, inv); err != nil {
		return Message{}, err
	}
	if err := invHTML.Execute(&h, inv); err != nil {
		return Message{}, err
	}
	subject := "Please sign: " + inv.DocumentName
	if inv.Reminder {
		subject = "New signing link: " + inv.DocumentName
	}
	return Message{Channel: Email, Kind: KindInvitation, To: to, Subject: subject, Text: t.String(), HTML: h.String()}, nil
}

// oneLine keeps header-bound and display values on one line (no header injection in subjects).
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' }), " ")
}
