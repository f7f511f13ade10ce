package licence

import (
	"fmt"
	"slices"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// TestPlanFeatures walks every combination of what a request may make: each part needs its own
// feature and nothing else, and a render that only renders (the empty plan) needs none.
func TestPlanFeatures(t *testing.T) {
	t.Parallel()
	for mask := range 16 {
		p := Plan{Batch: mask&1 != 0, Workflow: mask&2 != 0, ESign: mask&4 != 0, Delivery: mask&8 != 0}
		var want []Feature
		if p.ESign {
			want = append(want, FeatureEsign)
		}
		if p.Batch {
			want = append(want, FeatureDispatch)
		}
		if p.Delivery {
			want = append(want, FeatureDelivery)
		}
		if p.Workflow {
			want = append(want, FeatureWorkflow)
		}
		if got := p.Features(); !slices.Equal(got, want) {
			t.Errorf("%+v: features %v, want %v", p, got, want)
		}
	}
}

// TestAllow checks every plan against every licence made of a subset of the features: allowed
// exactly when the licence holds every feature the plan needs, else 403 licence_feature_missing
// naming the first one missing.
func TestAllow(t *testing.T) {
	t.Parallel()
	pub, priv := operator(t)
	for have := range 1 << len(AllFeatures) {
		c := claims()
		c.Features = nil
		for i, f := range AllFeatures {
			if have&(1<<i) != 0 {
				c.Features = append(c.Features, f)
			}
		}
		if len(c.Features) == 0 {
			continue // a licence lists at least one feature
		}
		tok, err := Sign(priv, c)
		if err != nil {
			t.Fatal(err)
		}
		l, err := Parse(tok, pub, at(t0))
		if err != nil {
			t.Fatal(err)
		}
		for mask := range 16 {
			p := Plan{Batch: mask&1 != 0, Workflow: mask&2 != 0, ESign: mask&4 != 0, Delivery: mask&8 != 0}
			t.Run(fmt.Sprintf("%v/%+v", c.Features, p), func(t *testing.T) {
				var missing []Feature
				for _, f := range p.Features() {
					if !slices.Contains(c.Features, f) {
						missing = append(missing, f)
					}
				}
				err := l.Allow(p)
				if len(missing) == 0 {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					return
				}
				wantCode(t, err, CodeFeatureMissing)
				if e, _ := apperr.As(err); e.Extra["feature"] != string(missing[0]) {
					t.Fatalf("names %v, want %s", e.Extra["feature"], missing[0])
				}
			})
		}
	}
}

// TestAllowNeedsACurrentLicence: even the empty plan (a render that only renders) needs a
// licence that is installed and not expired.
func TestAllowNeedsACurrentLicence(t *testing.T) {
	t.Parallel()
	pub, priv := operator(t)
	tok, err := Sign(priv, claims())
	if err != nil {
		t.Fatal(err)
	}
	var none *Licence
	wantCode(t, none.Allow(Plan{}), CodeMissing)
	expired, err := Parse(tok, pub, at(t0.AddDate(2, 0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, expired.Allow(Plan{}), CodeExpired)
	l, err := Parse(tok, pub, at(t0))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Allow(Plan{}); err != nil {
		t.Fatal(err)
	}
}
