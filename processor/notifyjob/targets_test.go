package notifyjob

import (
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify"
)

// One message with a target per slot sends each slot its own invitation, once, however often
// it is delivered; a target that fails for a retryable reason makes the message come back.
func TestOneMessageWithTargetsSendsEachSlotOnce(t *testing.T) {
	t.Parallel()
	f := &failingSender{}
	e := newEnv(t, f)
	s, slots := e.session(t, 3, false, nil)
	msg := esign.NotifyMessage{Kind: string(notify.KindInvitation), GroupID: s.GroupID, TenantID: "t1",
		Targets: []esign.NotifyTarget{{Slot: 0, LinkJTI: slots[0].LinkJTI}, {Slot: 2, LinkJTI: slots[2].LinkJTI}}}
	if r := apptest.InvokeJSON(t, e.job.Handle, msg); r.Status != 200 || len(f.sent) != 2 {
		t.Fatalf("status %d, %d sent: %v", r.Status, len(f.sent), r.Logs)
	}
	if f.sent[0].To != signerEmail(0) || f.sent[1].To != signerEmail(2) {
		t.Fatalf("sent to %s and %s", f.sent[0].To, f.sent[1].To)
	}
	if r := apptest.InvokeJSON(t, e.job.Handle, msg); r.Status != 200 || len(f.sent) != 2 {
		t.Fatalf("redelivery: status %d, %d sent", r.Status, len(f.sent))
	}
	sent := e.events(t, s.GroupID, EvNotificationSent)
	if len(sent) != 2 || sent[0].Slot == sent[1].Slot {
		t.Fatalf("notification.sent %+v", sent)
	}

	// A provider outage fails the message (retry); the redelivery sends both targets.
	f2 := &failingSender{err: apperr.New(apperr.KindUnavailable, "notification_unavailable", "down")}
	e2 := newEnv(t, f2)
	s2, sl2 := e2.session(t, 2, false, nil)
	both := esign.NotifyMessage{Kind: string(notify.KindInvitation), GroupID: s2.GroupID,
		Targets: []esign.NotifyTarget{{Slot: 0, LinkJTI: sl2[0].LinkJTI}, {Slot: 1, LinkJTI: sl2[1].LinkJTI}}}
	if r := apptest.InvokeJSON(t, e2.job.Handle, both); r.Status != 500 {
		t.Fatalf("outage: status %d, want 500 (retry)", r.Status)
	}
	f2.err = nil
	if r := apptest.InvokeJSON(t, e2.job.Handle, both); r.Status != 200 || len(f2.sent) != 2 {
		t.Fatalf("after the outage: status %d, %d sent: %v", r.Status, len(f2.sent), r.Logs)
	}
	// Poison of a message whose targets all went out records nothing.
	if r := apptest.InvokeJSON(t, e2.job.HandlePoison, both); r.Status != 200 {
		t.Fatalf("poison: %d", r.Status)
	}
	if failed := e2.events(t, s2.GroupID, EvNotificationFailed); len(failed) != 0 {
		t.Fatalf("poison recorded sent targets as failed: %+v", failed)
	}
}
