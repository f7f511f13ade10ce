package fault

import (
	"context"
	"testing"

	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/azure/queuestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
)

// mailKey is one e-mail in effect: a session's message of a kind to one recipient.
type mailKey struct {
	correlationID string
	kind          notify.Kind
	to            string
}

// mails counts the outbox rows per (session, kind, recipient).
func mails(t testing.TB) map[mailKey]int {
	t.Helper()
	ob, err := outbox.New(account(t), "")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ob.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[mailKey]int{}
	for _, r := range rows {
		out[mailKey{r.CorrelationID, r.Kind, r.Recipient}]++
	}
	return out
}

// sessionState is a session's state and its audit event kinds, counted.
func sessionState(t testing.TB, groupID string) (esign.SessionState, map[string]int) {
	t.Helper()
	st, err := sessionstore.New(account(t), "esignsessions", "esignindex")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, _, err := st.Load(ctx, groupID)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Events(ctx, groupID)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range evs {
		kinds[e.Kind]++
		if e.Kind == "notification.sent" {
			kinds["notification.sent/"+e.Data["kind"].(string)]++
		}
	}
	return sess.State, kinds
}

// invited waits until every session's invitation is out: a signer who signs before it would
// make it moot (an invitation for a used link is dropped).
func invited(t testing.TB, sessions ...session) {
	t.Helper()
	eventually(t, "the invitations", func() bool {
		m := mails(t)
		for _, s := range sessions {
			if m[mailKey{s.CorrelationID, notify.KindInvitation, s.Signer}] == 0 {
				return false
			}
		}
		return true
	})
}

// complete waits until the session is complete and both e-mails of its completion are out:
// the requester's documents-ready and the signer's completion (two messages; either may land
// first).
func complete(t testing.TB, s session) {
	t.Helper()
	eventually(t, "session "+s.CorrelationID+" sealed and announced", func() bool {
		m := mails(t)
		return m[mailKey{s.CorrelationID, notify.KindDocumentsReady, s.Requester}] > 0 &&
			m[mailKey{s.CorrelationID, notify.KindSignerCompleted, s.Signer}] > 0
	})
}

// checkOnce wants the session complete with exactly one of everything: session.completed, one
// invitation, one completion e-mail to the signer, one documents-ready to the requester (each
// recorded once as notification.sent), no seal failure.
func checkOnce(t testing.TB, s session, m map[mailKey]int) {
	t.Helper()
	state, kinds := sessionState(t, s.GroupID)
	if state != esign.SessionComplete || kinds[esign.EvSessionCompleted] != 1 || kinds[esign.EvSealFailed] != 0 || kinds[esign.EvSessionSealing] != 1 {
		t.Errorf("session %s: %s, events %v", s.CorrelationID, state, kinds)
	}
	for _, k := range []mailKey{
		{s.CorrelationID, notify.KindInvitation, s.Signer},
		{s.CorrelationID, notify.KindSignerCompleted, s.Signer},
		{s.CorrelationID, notify.KindDocumentsReady, s.Requester},
	} {
		if m[k] != 1 || kinds["notification.sent/"+string(k.kind)] != 1 {
			t.Errorf("session %s: %d %s e-mails (%d recorded), want 1", s.CorrelationID, m[k], k.kind, kinds["notification.sent/"+string(k.kind)])
		}
	}
	if m[mailKey{s.CorrelationID, notify.KindSealFailure, s.Requester}] != 0 {
		t.Errorf("session %s: a seal-failure e-mail for a sealed session", s.CorrelationID)
	}
}

// sealMessage puts a seal message for the session on queue (the seal queue or its poison
// queue), as the host's output binding does.
func sealMessage(t testing.TB, queue string, s session) {
	t.Helper()
	q, err := queuestore.New(account(t), queue)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Send(context.Background(), esign.SealMessage{GroupID: s.GroupID, TenantID: tenant}); err != nil {
		t.Fatal(err)
	}
}

// signedProps are the signed PDF's properties (its ETag changes with every write).
func signedProps(t testing.TB, s session) blobstore.Props {
	t.Helper()
	rc, props, err := blobs(t).Open(context.Background(), "signed", signedPath(s))
	if err != nil {
		t.Fatalf("signed PDF of %s: %v", s.CorrelationID, err)
	}
	rc.Close()
	return props
}
