package portalapi

import (
	"net/http"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/i18n"
)

// viewLanguage is the language of the consent statements a session view carries: the page's
// ?lang= when the signer chose a supported language there, else the slot's locale, else the
// browser's Accept-Language, else English (DESIGN 18).
func viewLanguage(r *http.Request, sl *esign.Slot) string {
	if l := r.URL.Query().Get("lang"); i18n.Supports(l) {
		return l
	}
	return esign.ConsentLanguage(sl, r.Header.Get("Accept-Language"))
}

// checkLanguage is the field error of a consent request's language: one of the supported
// languages exactly as the session view names them, or none.
func checkLanguage(lang string) []apperr.FieldError {
	if lang == "" || i18n.Supports(lang) {
		return nil
	}
	return []apperr.FieldError{apperr.Field("language", "must be one of "+strings.Join(i18n.Supported, ", ")+", as the session view's language")}
}
