package e2e

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
)

// TestReminderLinkOpensThePortal (DESIGN 17): a session created with reminders; an hour after
// the invitations the SendReminders timer reminds both signers: the one who never opened the
// link gets an invitation with a fresh link that opens the portal (the unused first link is
// replaced), the one who opened it an e-mail without a link. The status counts each reminder
// and the trail records slot.reminded. The service runs on the real clock, so the hour is
// passed by moving the stored invitation times and the reminder entry back by it.
func TestReminderLinkOpensThePortal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	body := createBody(t, "parallel", 2)
	body["reminders"] = map[string]any{"firstAfterHours": 1, "everyHours": 1, "max": 2}
	body["expiresInMinutes"] = 600 // reminders fall before expiry only
	corr := body["correlationId"].(string)
	r := createSession(t, tenantA, body)
	groupID, created := r.str("groupId"), slotsOf(t, r, "slots")
	unopened, opened := signerEmail(body, 0), signerEmail(body, 1)
	waitInvitations(t, unopened, 1)
	waitInvitations(t, opened, 1)
	if a := activate(t, created[1].Link); a.Status != http.StatusOK {
		t.Fatalf("activate %d %s", a.Status, a.Raw)
	}
	if st := slotStatus(status(t, tenantA, corr), 0); st["reminders"] != float64(0) {
		t.Fatalf("slot 0 status before any reminder %v", st)
	}

	store, err := sessionstore.New(account(t), "esignsessions", "esignindex")
	if err != nil {
		t.Fatal(err)
	}
	sess, _, err := store.Load(ctx, groupID)
	if err != nil {
		t.Fatal(err)
	}
	hurry(t, store.Reminders(), groupID, sess.CreatedAt, time.Hour) // the create scheduled the first reminder
	if _, _, err := store.Update(ctx, groupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
		var ch esign.Change
		for i := range slots {
			slots[i].InvitedAt = slots[i].InvitedAt.Add(-time.Hour - time.Minute)
			ch.Touch(i)
		}
		return ch, esign.Extras{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := svc.host.RunTimer(ctx, "SendReminders"); err != nil {
		t.Fatalf("SendReminders: %v", err)
	}

	inv := waitInvitations(t, unopened, 2)
	if claimsOf(t, linkToken(t, inv[1].Link))["jti"] == claimsOf(t, linkToken(t, created[0].Link))["jti"] {
		t.Fatal("the reminder carries the unused first link")
	}
	if old := activate(t, created[0].Link); old.Status != http.StatusUnauthorized || old.code() != "link_replaced" {
		t.Errorf("the first link after the reminder %d %s", old.Status, old.Raw)
	}
	if a := activate(t, inv[1].Link); a.Status != http.StatusOK || a.str("accessToken") == "" {
		t.Fatalf("the reminder's link does not open the portal: %d %s", a.Status, a.Raw)
	}
	var notices []mail
	eventually(t, "the opened signer's reminder", func() bool {
		notices = nil
		for _, m := range mailTo(t, opened) {
			if m.Kind == "signer_reminder" {
				notices = append(notices, m)
			}
		}
		return len(notices) >= 1
	})
	if len(notices) != 1 || notices[0].Link != "" || len(invitations(t, opened)) != 1 {
		t.Fatalf("the opened signer got %d reminders (link %q) and %d invitations", len(notices), notices[0].Link, len(invitations(t, opened)))
	}
	st := status(t, tenantA, corr)
	for i := range 2 {
		if s := slotStatus(st, i); s["reminders"] != float64(1) || s["lastRemindedAt"] == nil {
			t.Errorf("slot %d status %v, want one reminder", i, s)
		}
	}
	if rb, _ := st.JSON["reminders"].(map[string]any); rb["max"] != float64(2) {
		t.Errorf("status reminders block %v", st.JSON["reminders"])
	}
	if k := eventKinds(st, 0); !slices.Contains(k, esign.EvSlotReminded) {
		t.Errorf("slot 0 events %v lack slot.reminded", k)
	}
}

// TestReminderDeliveryLinkOpensThePortal (DESIGN 17: deliveries take the same block for
// unopened recipients): a delivery to two recipients created with reminders; one opens it. An
// hour after the invitations the SendReminders timer reminds only the one who never opened it,
// with a link that opens the delivery; the list counts the reminder and the trail records
// delivery.reminded. The hour is passed by moving the stored sentAt and the reminder entries
// back by it.
func TestReminderDeliveryLinkOpensThePortal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	body := deliveryBody(t, "secure-email", 2)
	body["reminders"] = map[string]any{"firstAfterHours": 1, "everyHours": 1, "max": 2}
	corr := body["correlationId"].(string)
	ds := createDelivery(t, tenantA, body)
	deliveryMail(t, ds[0].Recipient, "delivery_invitation")
	deliveryMail(t, ds[1].Recipient, "delivery_invitation")
	if r := recipientCall(t, "POST", ds[1].ID, "/access", ds[1].Token, map[string]any{"eventType": "opened"}); r.Status != http.StatusOK {
		t.Fatalf("access opened: %d %s", r.Status, r.Raw)
	}
	if s := summaryOf(t, tenantA, corr, ds[0].ID); s["reminders"] != float64(0) || s["lastRemindedAt"] != nil {
		t.Fatalf("summary before any reminder %v", s)
	}

	store := deliveryStore(t)
	for _, d := range ds {
		s, err := store.Load(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if s.SentAt.IsZero() {
			t.Fatalf("%s: the invitation is not recorded", d.ID)
		}
		hurry(t, store.Reminders(), d.ID, s.CreatedAt, time.Hour) // the create scheduled the first reminder
		s.SentAt = s.SentAt.Add(-time.Hour - time.Minute)
		if err := store.Apply(ctx, s, delivery.Change{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.host.RunTimer(ctx, "SendReminders"); err != nil {
		t.Fatalf("SendReminders: %v", err)
	}

	rem := deliveryMail(t, ds[0].Recipient, "delivery_reminder")
	link := regexp.MustCompile(`https?://\S+/deliver/\S+`).FindString(rem.Text)
	if link == "" {
		t.Fatalf("no link in the reminder %q", rem.Text)
	}
	if r := recipientCall(t, "GET", ds[0].ID, "", deliveryToken(t, link), nil); r.Status != http.StatusOK || r.str("state") != "sent" {
		t.Fatalf("the reminder's link does not open the delivery: %d %s", r.Status, r.Raw)
	}
	s := summaryOf(t, tenantA, corr, ds[0].ID)
	if s["reminders"] != float64(1) || s["lastRemindedAt"] == nil {
		t.Errorf("summary after the reminder %v", s)
	}
	if rb, _ := s["reminderPolicy"].(map[string]any); rb["max"] != float64(2) {
		t.Errorf("summary reminderPolicy %v", s["reminderPolicy"])
	}
	events, err := store.Events(ctx, ds[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events, func(e deliverystore.AuditEvent) bool { return e.Kind == delivery.EvReminded }) {
		t.Errorf("no delivery.reminded in the trail")
	}
	for _, m := range mailTo(t, ds[1].Recipient) {
		if m.Kind == "delivery_reminder" {
			t.Errorf("the recipient who opened it was reminded")
		}
	}
	if s := summaryOf(t, tenantA, corr, ds[1].ID); s["reminders"] != float64(0) {
		t.Errorf("the opened delivery's summary %v", s)
	}
}
