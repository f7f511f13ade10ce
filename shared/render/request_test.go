package render

import (
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/text/texttest"
)

// TestOptionsFreeText: generatedBy and sourceSystem reach the document.rendered audit row and
// the batch's records, so they follow shared/text as one line, refused naming options.<key>.
func TestOptionsFreeText(t *testing.T) {
	t.Parallel()
	for _, f := range []struct {
		field string
		set   func(o *Options, v string)
	}{
		{"options.generatedBy", func(o *Options, v string) { o.GeneratedBy = v }},
		{"options.sourceSystem", func(o *Options, v string) { o.SourceSystem = v }},
	} {
		check := func(name, v string, ok bool) {
			var o Options
			f.set(&o, v)
			err := o.Validate()
			if ok {
				if err != nil {
					t.Errorf("%s %s: refused: %v", f.field, name, err)
				}
				return
			}
			if e, isApp := apperr.As(err); !isApp || e.Kind != apperr.KindInvalid || len(e.Fields) != 1 || e.Fields[0].Field != f.field {
				t.Errorf("%s %s: %v, want 400 naming the field", f.field, name, err)
			}
		}
		texttest.Each(false, check)
	}
}
