package render

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/text"
)

// Request is the body of POST /api/render (DESIGN 9).
type Request struct {
	TemplatePath     string          `json:"templatePath"`
	Options          Options         `json:"options"`
	DataSource       json.RawMessage `json:"dataSource"`
	TemplateSettings json.RawMessage `json:"templateSettings,omitempty"`
	Features         map[string]bool `json:"features,omitempty"`
}

// Options are the render's options; every one is optional.
type Options struct {
	CorrelationID      string `json:"correlationId,omitempty"`
	DocumentID         string `json:"documentId,omitempty"`
	DocType            string `json:"docType,omitempty"`
	Title              string `json:"title,omitempty"`
	GeneratedBy        string `json:"generatedBy,omitempty"`
	SourceSystem       string `json:"sourceSystem,omitempty"`
	DocumentIDTemplate string `json:"documentIdTemplate,omitempty"`
	FileNameTemplate   string `json:"fileNameTemplate,omitempty"`
	// Supersedes names the batch a resubmitted batch replaces (batch dispatch only).
	Supersedes string `json:"supersedes,omitempty"`
}

// Limits of a render request's text options.
const (
	maxOption     = 256
	maxTitle      = 512
	maxRecordKeys = 500
)

// Batch reports whether dataSource is an array (batch dispatch) rather than one record.
func (r *Request) Batch() bool {
	return bytes.HasPrefix(bytes.TrimLeft(r.DataSource, " \t\r\n"), []byte("["))
}

// Record decodes dataSource as one record (a JSON object; numbers kept as json.Number). Errors:
// 400 naming dataSource.
func (r *Request) Record() (map[string]any, error) {
	raw := bytes.TrimSpace(r.DataSource)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("dataSource", "is required: one record (an object)"))
	}
	return DecodeRecord("dataSource", raw)
}

// DecodeRecord decodes one record, a JSON object, keeping numbers as json.Number. Errors: 400
// naming field.
func DecodeRecord(field string, raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var rec map[string]any
	if err := dec.Decode(&rec); err != nil || rec == nil {
		return nil, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field(field, "must be a JSON object of the record's fields"))
	}
	if len(rec) > maxRecordKeys {
		return nil, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field(field, "has too many keys"))
	}
	return rec, nil
}

// Validate checks the options' lengths and characters; the correlationId's form is esign's.
func (o *Options) Validate() error {
	var errs []apperr.FieldError
	for _, f := range []struct {
		name, v string
		max     int
	}{
		{"options.correlationId", o.CorrelationID, 128}, {"options.documentId", o.DocumentID, maxOption},
		{"options.docType", o.DocType, 128}, {"options.title", o.Title, maxTitle},
		{"options.generatedBy", o.GeneratedBy, maxOption}, {"options.sourceSystem", o.SourceSystem, maxOption},
		{"options.documentIdTemplate", o.DocumentIDTemplate, maxOption}, {"options.fileNameTemplate", o.FileNameTemplate, maxOption},
		{"options.supersedes", o.Supersedes, 128},
	} {
		if len(f.v) > f.max {
			errs = append(errs, apperr.Field(f.name, fmt.Sprintf("must be at most %d bytes", f.max)))
		} else if why := text.Problem(f.v, text.Line); why != "" {
			errs = append(errs, apperr.Field(f.name, why))
		}
	}
	if len(errs) > 0 {
		return apperr.Invalid(apperr.CodeInvalidRequest, errs...)
	}
	return nil
}

// appendDerived adds field's problem when v, the document's what expanded from field's template
// for the record, is longer than max bytes or not one line of acceptable text.
func appendDerived(errs []apperr.FieldError, field, what, v string, max int) []apperr.FieldError {
	why := text.Problem(v, text.Line)
	if len(v) > max {
		why = fmt.Sprintf("is longer than %d bytes", max)
	}
	if why == "" {
		return errs
	}
	return append(errs, apperr.Field(field, fmt.Sprintf("makes of this record a %s that %s", what, why)))
}
