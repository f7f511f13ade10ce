package dispatch_test

import (
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/text/texttest"
)

// TestDecideComments: an approver's comments go into the decision's audit row, so they follow
// shared/text (lines of text), refused as 400 naming comments, the batch untouched.
func TestDecideComments(t *testing.T) {
	t.Parallel()
	check := func(name, v string, ok bool) {
		t.Run(name, func(t *testing.T) {
			b := &dispatch.Batch{BatchID: "b1", State: dispatch.StatePendingApproval, SubmittedBy: "oid-alice"}
			ch, err := dispatch.Decide(b, dispatch.DecisionRequestChanges, "oid-bob", v, false, time.Now())
			if ok {
				if err != nil || b.DecisionComments != v || len(ch.Events) == 0 {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e, isApp := apperr.As(err)
			if !isApp || e.Kind != apperr.KindInvalid || len(e.Fields) != 1 || e.Fields[0].Field != "comments" {
				t.Fatalf("err = %v, want 400 naming comments", err)
			}
			if b.State != dispatch.StatePendingApproval || b.DecisionComments != "" {
				t.Fatalf("a refused decision changed the batch: %+v", b)
			}
		})
	}
	texttest.Each(true, check)
}
