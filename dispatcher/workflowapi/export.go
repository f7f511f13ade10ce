package workflowapi

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/web"
	"github.com/esign-svc/esign/shared/workflow"
)

type exportView struct {
	statusView
	TemplatePath string         `json:"templatePath"`
	CreatedAt    string         `json:"createdAt"`
	UpdatedAt    string         `json:"updatedAt"`
	Data         map[string]any `json:"data"`
}

// export is GET /api/workflow/{workflowId}/export?format=json|csv (JWT of the creator's tenant:
// Esign.Initiator, Workflow.Approver or Service.Admin): json (the default) is the metadata and
// `data` keyed by field; csv is one row per field of the schema, in step order: step, key,
// label, value, a cell starting with = + - @ (or a tab or carriage return) prefixed with ' so
// that no spreadsheet reads it as a formula. Errors: 400 format; 401; 403; 404.
func (a *API) export(w http.ResponseWriter, r *http.Request) error {
	x, err := a.own(r, jwtRoles...)
	if err != nil {
		return err
	}
	if err := web.NoBody(r); err != nil {
		return err
	}
	format := r.URL.Query().Get("format")
	if format != "" && format != "json" && format != "csv" {
		return apperr.Invalid(workflow.CodeInvalidRequest, apperr.Field("format", "must be json or csv"))
	}
	s, err := a.Workflows.SchemaOf(r.Context(), x)
	if err != nil {
		return err
	}
	if format != "csv" {
		return web.JSON(w, http.StatusOK, exportView{statusView: statusOf(x), TemplatePath: x.TemplatePath,
			CreatedAt: stamp(x.CreatedAt), UpdatedAt: stamp(x.UpdatedAt), Data: x.AllData()})
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	rows := [][]string{{"step", "key", "label", "value"}}
	data := x.AllData()
	for i, st := range s.Steps {
		for _, f := range s.StepFields(i) {
			rows = append(rows, []string{cell(st.ID), cell(f.Key), cell(f.Label), cell(text(data[f.Key]))})
		}
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="workflow-`+x.ID+`.csv"`)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(buf.Bytes())
	return err
}

// text is a value as a CSV cell: strings as they are, numbers as written, others as JSON.
func text(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// cell escapes a formula: a leading = + - @, tab or carriage return gets a ' before it.
func cell(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' || s[0] == '\r') {
		return "'" + s
	}
	return s
}
