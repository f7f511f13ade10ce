package notify

import "strings"

// Invitation is everything a signer invitation may say (spec: the portal link, the signer's
// name and the document's name; the requester's names in the footer for auto-triggered sessions),
// in the signer's language.
type Invitation struct {
	SignerName   string
	DocumentName string
	PortalURL    string
	Requester    string // requestedBy, optional
	Organization string // organizationName, optional
	Reminder     bool   // a resend
	Locale       string // the signer's language ("": English)
}

// InvitationMessage renders a signer invitation e-mail to the given address, in the signer's
// language (shared/i18n).
func InvitationMessage(to string, inv Invitation) (Message, error) {
	l := newLetter(inv.Locale)
	doc := map[string]string{"document": oneLine(inv.DocumentName)}
	l.greeting(inv.SignerName)
	subject, body := "email.invite.subject", "email.invite.body"
	if inv.Reminder {
		subject, body = "email.invite.subjectReminder", "email.invite.bodyReminder"
	}
	l.para(l.t(body, doc))
	l.link(l.t("email.invite.openHere", nil), l.t("email.invite.open", nil), inv.PortalURL)
	l.note(l.t("email.personal", nil))
	if by := joinNonEmpty(oneLine(inv.Requester), oneLine(inv.Organization)); by != "" {
		l.note(l.t("email.requestedBy", map[string]string{"by": by}))
	}
	return l.message(KindInvitation, to, l.t(subject, doc)), nil
}

// SignerReminderMessage renders the automatic reminder to a signer who already opened their
// link (DESIGN 17): it asks them to continue on the device where they did and carries no link
// (a new link would take the signing away from that device). inv.PortalURL and inv.Reminder are
// not used.
func SignerReminderMessage(to string, inv Invitation) (Message, error) {
	l := newLetter(inv.Locale)
	doc := map[string]string{"document": oneLine(inv.DocumentName)}
	l.greeting(inv.SignerName)
	l.para(l.t("email.remind.body", doc))
	l.note(l.t("email.personal", nil))
	if by := joinNonEmpty(oneLine(inv.Requester), oneLine(inv.Organization)); by != "" {
		l.note(l.t("email.requestedBy", map[string]string{"by": by}))
	}
	return l.message(KindSignerReminder, to, l.t("email.remind.subject", doc)), nil
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ", " + b
}

// oneLine keeps header-bound and display values on one line (no header injection in subjects).
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' }), " ")
}
