package dispatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/template"
)

var reRecordField = regexp.MustCompile(`^dataSource\[(\d+)\]$`)

// FuzzSplitRecords: any dataSource of a batch is 1 to MaxRecords records, each one compact
// line of records.jsonl that decodes to the very record validated, within MaxRecordBytes; or a
// 400 naming dataSource or at most 20 dataSource[i] of elements that exist. The per-record
// recipient keys are checked into error results on those keys only.
func FuzzSplitRecords(f *testing.F) {
	for _, s := range []string{
		`[{"employeeName":"Ada","salary":1.5,"recipientEmail":"a@example.com; b@example.org","recipientName":"A;B"}]`,
		"[\n {\"a\": [1, 2, {\"b\": \"x\\ny\"}]},\n {\"n\": 1e400}\n]",
		`[]`, `{}`, `null`, `[1, "x", null, [], {}]`,
		`[{"recipientEmail": 5}, {"recipientEmail": "x@y"}, {"recipientEmail": "a@b.c", "recipientName": "a;b"}]`,
		`[{"recipientEmail": "` + strings.Repeat("a@b.cd;", MaxRecipients+1) + `"}]`,
		`[{"k":"` + strings.Repeat("x", MaxRecordBytes) + `"}]`,
		`[` + strings.TrimSuffix(strings.Repeat(`1,`, 25), ",") + `]`,
		`[{"a":"\u2028"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, ds []byte) {
		raws, recs, err := splitRecords(ds)
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindInvalid || e.Code != apperr.CodeInvalidRequest || len(e.Fields) == 0 || len(e.Fields) > 20 {
				t.Fatalf("err = %#v", err)
			}
			var elems []json.RawMessage
			_ = json.Unmarshal(ds, &elems)
			for _, fe := range e.Fields {
				if fe.Field == "dataSource" && len(e.Fields) == 1 {
					continue
				}
				m := reRecordField.FindStringSubmatch(fe.Field)
				if m == nil {
					t.Fatalf("names %q", fe.Field)
				}
				if i, _ := strconv.Atoi(m[1]); i >= len(elems) {
					t.Fatalf("names %q of %d records", fe.Field, len(elems))
				}
			}
			return
		}
		if len(raws) == 0 || len(raws) > MaxRecords || len(raws) != len(recs) {
			t.Fatalf("%d raws, %d records", len(raws), len(recs))
		}
		for i, raw := range raws {
			var compact bytes.Buffer
			if json.Compact(&compact, raw) != nil || !bytes.Equal(compact.Bytes(), raw) || bytes.ContainsAny(raw, "\r\n") {
				t.Fatalf("record %d is not one compact line: %q", i, raw)
			}
			if len(raw) > MaxRecordBytes {
				t.Fatalf("record %d is %d bytes", i, len(raw))
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var back map[string]any
			if dec.Decode(&back) != nil || fmt.Sprint(back) != fmt.Sprint(recs[i]) {
				t.Fatalf("record %d stored as %s, validated as %v", i, raw, recs[i])
			}
			for _, required := range []bool{false, true} {
				for _, r := range recipientResults(recs[i], required) {
					if r.Severity != template.SeverityError || (r.FieldKey != KeyRecipientEmail && r.FieldKey != KeyRecipientName) || r.Message == "" {
						t.Fatalf("result %+v", r)
					}
				}
			}
		}
	})
}
