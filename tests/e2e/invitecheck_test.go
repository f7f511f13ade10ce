package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/queuestore"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// lost holds, per tenant that a test registered, the invitation outputs the host dropped
// (funchost's DropOutput hook): the tests of ReconcileInvitations lose them, as a host crash
// after the dispatcher answered would, and later deliver them late.
var lost = struct {
	sync.Mutex
	msgs map[string][]json.RawMessage // tenantId -> dropped messages
}{msgs: map[string][]json.RawMessage{}}

// loseInvitationsOf makes the host drop every invitation output of tenant (a fresh tenant, so
// no other test's message is touched).
func loseInvitationsOf(tenant string) {
	lost.Lock()
	defer lost.Unlock()
	lost.msgs[tenant] = nil
}

// dropOutput is the host's DropOutput hook: it drops the invitation messages (notify binding,
// kind invitation; the delivery invite binding) of the tenants registered above.
func dropOutput(_, binding string, message []byte) bool {
	var m struct {
		Kind     string `json:"kind"`
		TenantID string `json:"tenantId"`
	}
	if json.Unmarshal(message, &m) != nil || (binding != "invite" && (binding != "notify" || m.Kind != esign.KindInvitation)) {
		return false
	}
	lost.Lock()
	defer lost.Unlock()
	if _, ok := lost.msgs[m.TenantID]; !ok {
		return false
	}
	lost.msgs[m.TenantID] = append(lost.msgs[m.TenantID], append(json.RawMessage(nil), message...))
	return true
}

func droppedOf(t *testing.T, tenant string) []json.RawMessage {
	t.Helper()
	lost.Lock()
	defer lost.Unlock()
	if len(lost.msgs[tenant]) != 1 {
		t.Fatalf("%d invitation outputs dropped, want 1", len(lost.msgs[tenant]))
	}
	return lost.msgs[tenant]
}

func account(t *testing.T) *azconn.Account {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	return acct
}

// hurry makes the check the dispatcher scheduled for id (due after, the default
// INVITE_CHECK_AFTER, past created) due now: it finds it (so the create did schedule it), removes it and adds id at now, as ten
// minutes passing would. The check is read as of its own due time: a schedule never holds an
// entry older than the time it was last read at.
func hurry(t *testing.T, c *aggstore.Checks, id string, created time.Time, after time.Duration) {
	t.Helper()
	ctx := context.Background()
	if err := c.Add(ctx, id, time.Now()); err != nil {
		t.Fatal(err)
	}
	at := created.Add(after)
	due, err := c.Due(ctx, at, 100000)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range due {
		if it.ID == id && it.At.Equal(at) {
			found = true
			if err := c.Forget(ctx, it); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !found {
		t.Fatalf("no invitation check of %s due %s after its create", id, after)
	}
}

// deliverLate puts a dropped message on its queue after all (the lost message showing up).
func deliverLate(t *testing.T, queue string, msg json.RawMessage) {
	t.Helper()
	q, err := queuestore.New(account(t), queue)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
}

func runReconciler(t *testing.T) {
	t.Helper()
	if err := svc.host.RunTimer(context.Background(), "ReconcileInvitations"); err != nil {
		t.Fatalf("ReconcileInvitations: %v", err)
	}
}

// TestLostInvitationIsReconciledOnce: the host loses a create's invitation output. The signer
// has no invitation; the reconciler, once the check is due, sends it (with the create's link);
// the lost message arriving afterwards is acknowledged without a second e-mail, and a second
// run sends nothing more. (The two tests here fire the reconciler in parallel: each run may
// send the other's invitation, and still each is sent once.)
func TestLostInvitationIsReconciledOnce(t *testing.T) {
	t.Parallel()
	tenant := uuid.NewString()
	loseInvitationsOf(tenant)
	body := createBody(t, "parallel", 1)
	body["pdfBlobPath"], body["pdfHash"] = uploadFixtureAs(t, tenant, "template-3p.pdf")
	signer := body["signers"].([]any)[0].(map[string]any)["email"].(string)
	r := createSession(t, tenant, body)
	groupID, links := r.str("groupId"), slotsOf(t, r, "slots")
	msgs := droppedOf(t, tenant) // outputs are written (or dropped) before the answer
	if got := invitations(t, signer); len(got) != 0 {
		t.Fatalf("%d invitations although the output was lost", len(got))
	}
	store, err := sessionstore.New(account(t), "esignsessions", "esignindex")
	if err != nil {
		t.Fatal(err)
	}
	sess, _, err := store.Load(context.Background(), groupID)
	if err != nil {
		t.Fatal(err)
	}
	hurry(t, store.InviteChecks(), groupID, sess.CreatedAt, aggstore.DefaultCheckAfter)

	runReconciler(t)
	// This run sends it, or a run another test fired at the same moment does (this one then
	// finds the claim held and keeps the check).
	got := waitInvitations(t, signer, 1)
	sameLink(t, got[0].Link, links[0].Link)
	// the reconciler's log comes back with its invocation's reply, after the e-mail is written
	// (and from another test's run, maybe later than this one's)
	eventually(t, "the reconciler's log of the invitation it sent", func() bool {
		return strings.Contains(svc.logs.String(), "invitecheck: invitation of session "+groupID+" slot 0 not recorded as sent")
	})

	deliverLate(t, esign.QueueNotifications, msgs[0])
	eventually(t, "the late message acknowledged", func() bool {
		return strings.Contains(svc.logs.String(), "notify: invitation of session "+groupID+" slot 0 was already sent; acknowledged")
	})
	runReconciler(t)
	if got := invitations(t, signer); len(got) != 1 {
		t.Fatalf("%d invitations in the end, want 1", len(got))
	}
}

// TestLostDeliveryInvitationIsReconciledOnce: the same for a secure-email delivery.
func TestLostDeliveryInvitationIsReconciledOnce(t *testing.T) {
	t.Parallel()
	tenant := uuid.NewString()
	loseInvitationsOf(tenant)
	body := deliveryBody(t, "secure-email", 1)
	body["pdfBlobPath"], _ = uploadFixtureAs(t, tenant, "plain-1p.pdf")
	d := createDelivery(t, tenant, body)[0]
	msgs := droppedOf(t, tenant)
	store, err := deliverystore.New(account(t), deliverystore.TableSessions, deliverystore.TableIndex)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Load(context.Background(), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		n := 0
		for _, m := range mailTo(t, d.Recipient) {
			if m.Kind == "delivery_invitation" {
				n++
			}
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("%d invitations although the output was lost", n)
	}
	hurry(t, store.InviteChecks(), d.ID, s.CreatedAt, aggstore.DefaultCheckAfter)

	runReconciler(t)
	eventually(t, "the reconciled invitation", func() bool { return count() >= 1 })
	deliverLate(t, delivery.QueueInvite, msgs[0])
	eventually(t, "the late message acknowledged", func() bool {
		return strings.Contains(svc.logs.String(), "deliveryinvite: "+d.ID+" already sent; acknowledged")
	})
	runReconciler(t)
	if n := count(); n != 1 {
		t.Fatalf("%d invitations in the end, want 1", n)
	}
}
