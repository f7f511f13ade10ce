package seal

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/queues"
)

// TestQueueNotices: each sealing notice effect becomes one notify message; an effect kind that
// is not a sealing notice (here the dispatcher's invitation, and a made-up kind) is an internal
// error and no message of the change leaves, not even the notices before it.
func TestQueueNotices(t *testing.T) {
	t.Parallel()
	sess := &esign.Session{GroupID: "g", TenantID: "t"}
	cases := []struct {
		name    string
		effects []esign.Effect
		want    []string // notice kinds, in order
		wantErr esign.EffectKind
	}{
		{"sealed", []esign.Effect{{Kind: esign.EffectDocumentsReady, Slot: -1}, {Kind: esign.EffectSignerCompleted, Slot: 0}}, []string{string(notify.KindDocumentsReady), string(notify.KindSignerCompleted)}, ""},
		{"failed", []esign.Effect{{Kind: esign.EffectSealFailure, Slot: -1}}, []string{string(notify.KindSealFailure)}, ""},
		{"none", nil, nil, ""},
		{"an invitation", []esign.Effect{{Kind: esign.EffectDocumentsReady, Slot: -1}, {Kind: esign.EffectInvite, Slot: 0}}, nil, esign.EffectInvite},
		{"a made-up kind", []esign.Effect{{Kind: "no_such_effect", Slot: -1}}, nil, "no_such_effect"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got error
			h := funcproto.QueueHandler(func(ctx context.Context, _ funcproto.QueueMessage) error {
				got = effects.EmitSealed(ctx, sess, tc.effects)
				return nil
			})
			r := apptest.Serve(t, h, apptest.QueueData(t, map[string]string{"groupId": "g"}))
			if tc.wantErr != "" {
				var e *apperr.Error
				if !errors.As(got, &e) || e.Kind != apperr.KindInternal || e.Code != esign.CodeUnknownEffect || !strings.Contains(e.Detail, string(tc.wantErr)) {
					t.Fatalf("error %v", got)
				}
				if len(r.Messages(queues.Notifications.Binding())) != 0 {
					t.Fatalf("outputs %v", r.Outputs)
				}
				return
			}
			if got != nil {
				t.Fatal(got)
			}
			var kinds []string
			for _, m := range notices(t, r) {
				if m.GroupID != "g" || m.TenantID != "t" {
					t.Fatalf("message %+v", m)
				}
				kinds = append(kinds, m.Kind)
			}
			if strings.Join(kinds, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("notices %v, want %v", kinds, tc.want)
			}
		})
	}
}
