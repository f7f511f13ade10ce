package certificate

import (
	"strconv"

	"github.com/esign-svc/esign/shared/i18n"
)

// language is the signer's language on the certificate: the language the consent statements
// were accepted in (DESIGN 18), English without one. The signer's heading and consent section
// are set in it; the rest of the certificate (the signer's table, the session's facts, how to
// verify) is the operator's record and stays English.
func (s Signer) language() string {
	for _, c := range s.Consents {
		if i18n.Supports(c.Language) {
			return c.Language
		}
	}
	return i18n.Default
}

// blocks are the signer's section: heading, table and the consent statements as accepted, each
// in the language it was accepted in (right to left set flush right).
func (s Signer) blocks() []block {
	lang := s.language()
	rtl := i18n.Dir(lang) == "rtl"
	bs := []block{
		{style: styleHeading, rtl: rtl, text: i18n.T(lang, "cert.signer", map[string]string{"n": strconv.Itoa(s.SlotIndex + 1), "name": orDash(s.Name)})},
		{rows: s.rows()},
	}
	if len(s.Consents) == 0 {
		return bs
	}
	bs = append(bs, block{style: styleSubheading, rtl: rtl, text: i18n.T(lang, "cert.consent", nil)},
		block{style: styleBody, rtl: rtl, text: i18n.T(lang, "cert.consentLanguage", map[string]string{"language": i18n.T(lang, "language.name", nil) + " (" + lang + ")"})})
	for i, cs := range s.Consents {
		cl := lang
		if i18n.Supports(cs.Language) {
			cl = cs.Language
		}
		crtl := i18n.Dir(cl) == "rtl"
		bs = append(bs, block{style: styleBody, rtl: crtl, text: i18n.T(cl, "cert.statement", map[string]string{"n": strconv.Itoa(i + 1),
			"key": orDash(cs.Key), "version": orDash(cs.Version), "at": FormatTime(cs.AcceptedAt)})},
			block{style: styleVerbatim, rtl: crtl, text: cs.Text})
	}
	return bs
}
