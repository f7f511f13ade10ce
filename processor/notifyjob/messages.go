package notifyjob

import (
	"bytes"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/esign-svc/esign/shared/notify"
)

// notice is what a requester notice or a signer's completion e-mail may say: the document's name,
// the slot's role (never the signer's address) and when it happened.
type notice struct {
	Document string
	Role     string
	When     string
}

type template struct {
	subject string
	text    *texttemplate.Template
	html    *htmltemplate.Template
}

func newTemplate(name, subject, text, html string) template {
	return template{
		subject: subject,
		text:    texttemplate.Must(texttemplate.New(name).Parse(text)),
		html:    htmltemplate.Must(htmltemplate.New(name).Parse(`<!doctype html><html><body style="font-family:sans-serif">` + html + `</body></html>` + "\n")),
	}
}

// templates per kind (not the invitation, which notify renders). Subjects end with the document
// name.
var templates = map[notify.Kind]template{
	notify.KindSignerCompleted: newTemplate("completed", "You signed: ",
		"You signed the document \"{{.Document}}\" on {{.When}}.\n\nThank you. No further action is needed.\n",
		`<p>You signed the document <strong>{{.Document}}</strong> on {{.When}}.</p><p>Thank you. No further action is needed.</p>`),
	notify.KindSignerNotice: newTemplate("signer-notice", "Signer completed: ",
		"The signer in the role \"{{.Role}}\" signed the document \"{{.Document}}\" on {{.When}}.\n",
		`<p>The signer in the role <strong>{{.Role}}</strong> signed the document <strong>{{.Document}}</strong> on {{.When}}.</p>`),
	notify.KindDeclineNotice: newTemplate("decline-notice", "Signing declined: ",
		"The signer in the role \"{{.Role}}\" declined to sign the document \"{{.Document}}\" on {{.When}}.\n",
		`<p>The signer in the role <strong>{{.Role}}</strong> declined to sign the document <strong>{{.Document}}</strong> on {{.When}}.</p>`),
	notify.KindRevokeNotice: newTemplate("revoke-notice", "Signing revoked: ",
		"The signing session for the document \"{{.Document}}\" was revoked on {{.When}}. Its signing links no longer work.\n",
		`<p>The signing session for the document <strong>{{.Document}}</strong> was revoked on {{.When}}. Its signing links no longer work.</p>`),
	notify.KindDocumentsReady: newTemplate("documents-ready", "Signed document ready: ",
		"Every required signer signed the document \"{{.Document}}\"; the signed document was sealed on {{.When}} and is ready.\n",
		`<p>Every required signer signed the document <strong>{{.Document}}</strong>; the signed document was sealed on {{.When}} and is ready.</p>`),
	notify.KindSealFailure: newTemplate("seal-failure", "Sealing failed: ",
		"Every required signer signed the document \"{{.Document}}\", but sealing the signed document failed on {{.When}}. The service administrator has been told; the signatures are kept.\n",
		`<p>Every required signer signed the document <strong>{{.Document}}</strong>, but sealing the signed document failed on {{.When}}. The service administrator has been told; the signatures are kept.</p>`),
}

// render makes the e-mail of kind to the address to.
func render(kind notify.Kind, to string, n notice) (notify.Message, error) {
	tpl, ok := templates[kind]
	if !ok {
		return notify.Message{}, errUnknownKind(kind)
	}
	n.Document, n.Role = oneLine(n.Document), oneLine(n.Role)
	var t, h bytes.Buffer
	if err := tpl.text.Execute(&t, n); err != nil {
		return notify.Message{}, err
	}
	if err := tpl.html.Execute(&h, n); err != nil {
		return notify.Message{}, err
	}
	return notify.Message{Channel: notify.Email, Kind: kind, To: to, Subject: tpl.subject + n.Document, Text: t.String(), HTML: h.String()}, nil
}

// when formats a time for a notice (UTC, minutes).
func when(t time.Time) string { return t.UTC().Format("2 January 2006 15:04 UTC") }

func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' }), " ")
}
