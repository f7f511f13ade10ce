package workflow

import (
	"fmt"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/i18n"
	"github.com/esign-svc/esign/shared/text"
)

// checkText applies shared/text to free text a workflow keeps for its audit trail and sealed
// record (DESIGN 14): nil, or 400 invalid_request naming field.
func checkText(field, v string, form text.Form) error {
	if why := text.Problem(v, form); why != "" {
		return apperr.Invalid(CodeInvalidRequest, apperr.Field(field, why))
	}
	return nil
}

// TextProblems lists what shared/text refuses in the free text of the create request's
// templateSettings.workflow, which the invitations carry and the sealed record prints: the
// recipients' display names and the organisation name (one line each), the message (lines).
func (s *Setup) TextProblems() []apperr.FieldError {
	const at = "templateSettings.workflow."
	var errs []apperr.FieldError
	add := func(field, v string, form text.Form) {
		if why := text.Problem(v, form); why != "" {
			errs = append(errs, apperr.Field(at+field, why))
		}
	}
	for i, rc := range s.Recipients {
		add(fmt.Sprintf("recipients[%d].displayName", i), rc.DisplayName, text.Line)
		errs = append(errs, i18n.CheckLocale(fmt.Sprintf(at+"recipients[%d].locale", i), rc.Locale)...)
	}
	add("organizationName", s.OrganizationName, text.Line)
	add("message", s.Message, text.Lines)
	return errs
}
