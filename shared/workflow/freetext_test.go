package workflow

import (
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/text/texttest"
)

// TestFreeText: every free text a workflow keeps for its audit trail and sealed record follows
// shared/text, and a refusal names the field by its full JSON path; the fields of lines take
// line breaks.
func TestFreeText(t *testing.T) {
	flow, _, _, _ := schemas(t)
	now := t0.Add(time.Hour)
	pending := start{state: StatePendingApproval, step: 1, spend: 50, outcome: OutcomePassed}
	type decision func(w *Workflow, v string) (kernel.Change, error)
	for _, f := range []struct {
		field string
		lines bool
		call  decision
	}{
		{"comment", true, func(w *Workflow, v string) (kernel.Change, error) { return w.Approve(first, v, now) }},
		{"comment", true, func(w *Workflow, v string) (kernel.Change, error) { return w.Reject(first, v, now) }},
		{"justification", true, func(w *Workflow, v string) (kernel.Change, error) {
			return w.GovernanceDecision(first, DecisionApproveWithException, v, now)
		}},
		{"changes[0].message", true, func(w *Workflow, v string) (kernel.Change, error) {
			return w.RequestChanges(flow, first, []ChangeRequest{{Message: v, Severity: "info"}}, now)
		}},
		{"changes[0].category", false, func(w *Workflow, v string) (kernel.Change, error) {
			return w.RequestChanges(flow, first, []ChangeRequest{{Message: "Check", Category: v, Severity: "info"}}, now)
		}},
	} {
		check := func(name, v string, ok bool) {
			t.Run(f.field+"/"+name, func(t *testing.T) {
				_, err := f.call(pending.build(flow), v)
				if ok {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					return
				}
				wantField(t, err, f.field)
			})
		}
		texttest.Each(f.lines, check)
	}
}

// TestSetupTextProblems: the create request's templateSettings.workflow free text.
func TestSetupTextProblems(t *testing.T) {
	t.Parallel()
	for _, f := range []struct {
		field string
		lines bool
		set   func(s *Setup, v string)
	}{
		{"templateSettings.workflow.recipients[1].displayName", false, func(s *Setup, v string) { s.Recipients[1].DisplayName = v }},
		{"templateSettings.workflow.organizationName", false, func(s *Setup, v string) { s.OrganizationName = v }},
		{"templateSettings.workflow.message", true, func(s *Setup, v string) { s.Message = v }},
	} {
		check := func(name, v string, ok bool) {
			s := Setup{Recipients: []Recipient{{Email: "a@example.com", DisplayName: "Ann"}, {Email: "b@example.com"}}}
			f.set(&s, v)
			got := s.TextProblems()
			if ok != (len(got) == 0) || (!ok && (len(got) != 1 || got[0].Field != f.field)) {
				t.Errorf("%s %s: %+v", f.field, name, got)
			}
		}
		texttest.Each(f.lines, check)
	}
}

func wantField(t *testing.T, err error, field string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindInvalid || e.Code != CodeInvalidRequest || len(e.Fields) != 1 || e.Fields[0].Field != field {
		t.Fatalf("err = %v, want 400 %s naming %s", err, CodeInvalidRequest, field)
	}
}

// TestSetupLocale: a recipient's locale is a supported BCP 47 language, named by its full path.
func TestSetupLocale(t *testing.T) {
	t.Parallel()
	for v, ok := range map[string]bool{"": true, "fr": true, "ar-EG": true, "fr_FR": false, "ja": false} {
		s := Setup{Recipients: []Recipient{{Email: "a@example.com"}, {Email: "b@example.com", Locale: v}}}
		got := s.TextProblems()
		if ok != (len(got) == 0) || (!ok && got[0].Field != "templateSettings.workflow.recipients[1].locale") {
			t.Errorf("locale %q: %+v", v, got)
		}
	}
}
