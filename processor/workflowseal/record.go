package workflowseal

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/workflow"
)

// Record is the workflow record page of w: the workflow's ids and times, every step's values
// (a text field's value verbatim), the validation results (each rule passed or failed: a manual
// seal of failing data prints the failed ones), the manual seal's reason, and every decision with its stage,
// round, approver (name when known, and the keyed hash of the e-mail: the audit trail's), time, comment and an
// exception's justification verbatim. head is the evidence bundle's head hash; sealedAt the
// seal's time.
func Record(w *workflow.Workflow, s *workflow.Schema, head string, sealedAt time.Time) certificate.Record {
	ft := certificate.FormatTime
	docID, docType := w.Document()
	r := certificate.Record{Title: "Workflow record", Footer: "Workflow record, correlation ID " + w.CorrelationID, EvidenceHeadHash: head}
	r.Sections = append(r.Sections, certificate.Section{Heading: "Workflow", Items: []certificate.Item{
		{Label: "Title", Value: s.Title},
		{Label: "Workflow ID", Value: w.ID},
		{Label: "Correlation ID", Value: w.CorrelationID},
		{Label: "Document ID", Value: docID},
		{Label: "Document type", Value: docType},
		{Label: "Tenant ID", Value: w.Tenant},
		{Label: "Template", Value: w.TemplatePath},
		{Label: "Created", Value: ft(w.CreatedAt)},
		{Label: "Sealed", Value: ft(sealedAt)},
		{Label: "Validation outcome", Value: string(w.Outcome)},
		{Label: "Approval rounds", Value: strconv.Itoa(w.Round)},
		{Label: "Evidence bundle head hash", Value: head},
	}})
	data := w.AllData()
	for i, st := range s.Steps {
		sec := certificate.Section{Heading: fmt.Sprintf("Step %d: %s", i+1, firstOf(st.Title, st.ID))}
		for _, f := range s.StepFields(i) {
			sec.Items = append(sec.Items, certificate.Item{Label: firstOf(f.Label, f.Key) + " (" + f.Key + ")",
				Value: valueText(data[f.Key]), Verbatim: f.Type == template.TypeText})
		}
		r.Sections = append(r.Sections, sec)
	}
	val := certificate.Section{Heading: "Validation results"}
	for _, res := range w.Results {
		label := "failed " + string(res.Severity) + " " + firstOf(res.RuleID, "-")
		if res.Passed {
			label = "passed " + string(res.Severity) + " " + firstOf(res.RuleID, "-")
		}
		if res.FieldKey != "" {
			label += " (" + res.FieldKey + ")"
		}
		val.Items = append(val.Items, certificate.Item{Label: label, Value: res.Message})
	}
	if len(w.Results) == 0 {
		val.Items = []certificate.Item{{Label: "Results", Value: "none: every field check and rule passed"}}
	}
	r.Sections = append(r.Sections, val)
	dec := certificate.Section{Heading: "Decisions"}
	for i, d := range w.Decisions {
		stage := strconv.Itoa(d.Stage)
		if d.Stage >= 1 && d.Stage <= len(s.Stages) && s.Stages[d.Stage-1].Name != "" {
			stage += " (" + s.Stages[d.Stage-1].Name + ")"
		}
		dec.Items = append(dec.Items,
			certificate.Item{Label: fmt.Sprintf("Decision %d", i+1), Value: fmt.Sprintf("%s at stage %s, round %d, %s", d.Decision, stage, d.Round, ft(d.At))},
			certificate.Item{Label: "Approver", Value: firstOf(d.ApproverName, "no display name (reviewer link or token without a name)")},
			certificate.Item{Label: "Approver (e-mail hash)", Value: firstOf(d.ApproverHash, "none: the token carried no e-mail")})
		if d.StandIn != "" {
			dec.Items = append(dec.Items, certificate.Item{Label: "Admin standing in for the named approver, reason", Value: d.StandIn, Verbatim: true})
		}
		if d.Comment != "" {
			dec.Items = append(dec.Items, certificate.Item{Label: "Comment", Value: d.Comment, Verbatim: true})
		}
		if d.Justification != "" {
			dec.Items = append(dec.Items, certificate.Item{Label: "Exception justification", Value: d.Justification, Verbatim: true})
		}
	}
	if len(w.Decisions) == 0 {
		dec.Items = []certificate.Item{{Label: "Decisions", Value: "none: sealed without an approval decision"}}
	}
	if w.SealReason != "" {
		dec.Items = append(dec.Items, certificate.Item{Label: "Manual seal, reason", Value: w.SealReason, Verbatim: true})
	}
	r.Sections = append(r.Sections, dec)
	return r
}

// valueText is a value as the participant gave it: a string as is, a number as written, a
// boolean as yes or no, anything else as JSON; "" for no value.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "yes"
		}
		return "no"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
