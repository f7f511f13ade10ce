package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/text"
	"github.com/esign-svc/esign/shared/web"
)

// FuzzRequest: any body of POST /api/render decodes (as the route does) and checks its options
// and its record into a request whose options are within their limits and one line of text
// each, and whose record is the dataSource object itself, with its numbers kept exactly; or into
// a 400 naming the option, dataSource, or the body's field at fault. A request taken re-encodes
// to one taken again the same.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		`{"templatePath":"templates/offer.zip","options":{"correlationId":"c-1","title":"Offer"},"dataSource":{"employeeName":"Ada","salary":12345678901234567890.5}}`,
		`{"templatePath":"templates/offer/","dataSource":[{"a":1},{"b":2}],"features":{"dispatch":true},"templateSettings":{"esign":{"enabled":true}}}`,
		`{"templatePath":"t","options":{"title":"a\nb","docType":"` + strings.Repeat("x", 129) + `"},"dataSource":{}}`,
		`{"templatePath":"t","options":{"documentId":"\u202e\u0000"},"dataSource":null}`,
		`{"templatePath":"t","dataSource":"x"}`,
		`{"templatePath":"t","dataSource":{"a":1,"a":2}}`,
		`{"templatePath":"t","dataSource":{"a":1e999}}`,
		`{"templatePath":"t","options":{"correlationID":"c"},"dataSource":{}}`,
		`{"templatePath":"t","options":{"unknown":1}}`,
		`{"templatePath":"t","features":{"dispatch":"yes"}}`,
		`{"templatePath":"t","dataSource":{}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req Request
		err := web.DecodeJSONBytes(body, &req)
		if err == nil {
			again, _ := json.Marshal(req)
			var back Request
			if err := web.DecodeJSONBytes(again, &back); err != nil {
				t.Fatalf("refuses its own re-encoding %s: %v", again, err)
			}
			if b, _ := json.Marshal(back); !bytes.Equal(b, again) {
				t.Fatalf("round trip changed the request:\n%s\n%s", again, b)
			}
			err = req.Options.Validate()
			if err == nil {
				checkOptions(t, req.Options)
				if !req.Batch() {
					var rec map[string]any
					if rec, err = req.Record(); err == nil {
						checkRecord(t, req.DataSource, rec)
					}
				}
			}
		}
		if err == nil {
			return
		}
		e, ok := apperr.As(err)
		if !ok || e.Kind != apperr.KindInvalid || len(e.Fields) == 0 {
			t.Fatalf("err = %#v", err)
		}
		for _, fe := range e.Fields {
			if fe.Field == "" || fe.Message == "" {
				t.Fatalf("a problem naming no field: %#v", e)
			}
		}
	})
}

func checkOptions(t *testing.T, o Options) {
	t.Helper()
	for _, v := range []string{o.CorrelationID, o.DocumentID, o.DocType, o.Title, o.GeneratedBy, o.SourceSystem,
		o.DocumentIDTemplate, o.FileNameTemplate, o.Supersedes} {
		if len(v) > maxTitle || text.Problem(v, text.Line) != "" {
			t.Fatalf("took option %q", v)
		}
	}
	if len(o.CorrelationID) > 128 || len(o.DocType) > 128 || len(o.Supersedes) > 128 {
		t.Fatalf("took options %+v", o)
	}
}

// checkRecord: the record is dataSource's object, numbers as json.Number with their text.
func checkRecord(t *testing.T, ds json.RawMessage, rec map[string]any) {
	t.Helper()
	if rec == nil || len(rec) > maxRecordKeys {
		t.Fatalf("took a record of %d keys", len(rec))
	}
	var want map[string]any
	dec := json.NewDecoder(bytes.NewReader(ds))
	dec.UseNumber()
	if dec.Decode(&want) != nil {
		t.Fatalf("took dataSource %s", ds)
	}
	a, _ := json.Marshal(rec)
	b, _ := json.Marshal(want)
	if !bytes.Equal(a, b) {
		t.Fatalf("record %s from dataSource %s", a, ds)
	}
}
