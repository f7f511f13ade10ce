package template

import (
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// TestConfine: a request's template or schema path is accepted in the caller's own folder and
// in the operator's shared folder only; every other path is the same 400 invalid_blob_path on
// the field, whether or not anything is there.
func TestConfine(t *testing.T) {
	t.Parallel()
	const tenant = "11111111-1111-4111-8111-111111111111"
	for _, c := range []struct {
		name, path string
		ok         bool
	}{
		{"own zip", "templates/" + tenant + "/offer.zip", true},
		{"own folder", "templates/" + tenant + "/offer/", true},
		{"own schema", "templates/" + tenant + "/offer/schema.yaml", true},
		{"shared zip", "templates/shared/offer.zip", true},
		{"shared folder", "templates/shared/offer/", true},
		{"another tenant's", "templates/22222222-2222-4222-8222-222222222222/offer.zip", false},
		{"container root", "templates/offer.zip", false},
		{"tenant id as a prefix only", "templates/" + tenant + "x/offer.zip", false},
		{"the tenant folder itself", "templates/" + tenant, false},
		{"shared as a prefix only", "templates/sharedx/offer.zip", false},
		{"traversal out of the own folder", "templates/" + tenant + "/../22222222-2222-4222-8222-222222222222/offer.zip", false},
		{"another container", "documents/" + tenant + "/offer.zip", false},
		{"a URL", "https://evil.test/templates/" + tenant + "/offer.zip", false},
	} {
		err := Confine("templatePath", c.path, tenant)
		if c.ok {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		e, ok := apperr.As(err)
		if !ok || e.Kind != apperr.KindInvalid || e.Code != "invalid_blob_path" || len(e.Fields) != 1 || e.Fields[0].Field != "templatePath" {
			t.Errorf("%s: %v, want 400 invalid_blob_path on templatePath", c.name, err)
		}
	}
	// without a tenant only the shared folder is open; "shared" is never a tenant's own folder
	if err := Confine("templatePath", "templates/x/offer.zip", ""); err == nil {
		t.Error("no tenant: templates/x/ accepted")
	}
	if err := Confine("templatePath", "templates/shared/offer.zip", ""); err != nil {
		t.Errorf("no tenant, shared: %v", err)
	}
}
