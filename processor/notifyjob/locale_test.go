package notifyjob

import (
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify"
)

// TestInvitationInTheSlotsLanguage: the invitation of a slot created with a locale is written
// in that language (the requester's notices stay English: TestRequesterNoticesFollowTheirGates).
func TestInvitationInTheSlotsLanguage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s, slots := e.session(t, 2, false, func(_ *esign.Session, slots []esign.Slot) { slots[1].Locale = "de" })
	msg := esign.NotifyMessage{Kind: string(notify.KindInvitation), GroupID: s.GroupID, TenantID: "t1", Slot: 1, LinkJTI: slots[1].LinkJTI}
	if r := apptest.InvokeJSON(t, e.job.Handle, msg); r.Status != 200 {
		t.Fatalf("status %d logs %v", r.Status, r.Logs)
	}
	rows := e.rows(t)
	if len(rows) != 1 || rows[0].Subject != "Bitte unterschreiben: Contract 7" || !strings.Contains(rows[0].Text, "Hallo Signer 1,") ||
		!strings.Contains(rows[0].Text, "Angefordert von Ann Requester, Acme") {
		t.Fatalf("rows %+v", rows)
	}
}
