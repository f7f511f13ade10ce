package portalpurge

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/portalclient"
)

func msgOf(s *esign.Session) Message { return Message{GroupID: s.GroupID, TenantID: s.TenantID} }

func TestPurgeCallsThePortalAndRecordsOnce(t *testing.T) {
	t.Parallel()
	portal := newPortal(t, http.StatusAccepted)
	e := newEnv(t, portal)
	sess, slots := e.session(t, true)

	if s := apptest.InvokeJSON(t, e.job.Handle, msgOf(sess)).Status; s != http.StatusOK {
		t.Fatalf("status %d", s)
	}
	calls := portal.calls()
	if len(calls) != 1 {
		t.Fatalf("%d portal calls, want 1", len(calls))
	}
	c := calls[0]
	if c.sigErr != nil || c.path != portalclient.PurgePath || c.idem != sess.GroupID+":purge" {
		t.Fatalf("call %+v", c)
	}
	want := portalclient.PurgeRequest{GroupID: sess.GroupID, SessionIDs: []string{slots[0].SessionID, slots[1].SessionID}, Reason: "sealed"}
	if diff := cmp.Diff(want, c.req); diff != "" {
		t.Fatalf("purge request (-want +got):\n%s", diff)
	}
	purged := e.events(t, sess.GroupID, esign.EvPIIPurged)
	if len(purged) != 1 || purged[0].Data["what"] != What || purged[0].Slot != -1 || purged[0].ActorKind != "system" {
		t.Fatalf("pii.purged events %+v", purged)
	}
	if fmt.Sprint(purged[0].Data["slots"]) != "2" {
		t.Fatalf("pii.purged slots %v, want 2", purged[0].Data["slots"])
	}

	// A duplicate message: the portal is asked again (idempotent there), the trail is not.
	portal.setStatus(http.StatusNotFound)
	if s := apptest.InvokeJSON(t, e.job.Handle, msgOf(sess)).Status; s != http.StatusOK {
		t.Fatalf("duplicate: status %d", s)
	}
	if n := len(portal.calls()); n != 2 {
		t.Fatalf("%d portal calls after the duplicate, want 2", n)
	}
	if n := len(e.events(t, sess.GroupID, esign.EvPIIPurged)); n != 1 {
		t.Fatalf("%d pii.purged after a duplicate, want 1", n)
	}
}

func TestPurgeOutageIsRetriedThenPoisoned(t *testing.T) {
	t.Parallel()
	portal := newPortal(t, http.StatusServiceUnavailable)
	e := newEnv(t, portal)
	sess, _ := e.session(t, true)

	for i := 0; i < 2; i++ {
		if s := apptest.InvokeJSON(t, e.job.Handle, msgOf(sess)).Status; s < 300 {
			t.Fatalf("attempt %d: status %d, want a failure (retry)", i, s)
		}
	}
	if n := len(portal.calls()); n != 2 {
		t.Fatalf("%d portal calls, want 2", n)
	}
	if n := len(e.events(t, sess.GroupID, esign.EvPIIPurged)) + len(e.events(t, sess.GroupID, EvPurgeFailed)); n != 0 {
		t.Fatalf("%d purge events recorded while retrying, want 0", n)
	}

	if s := apptest.InvokeJSON(t, e.job.HandlePoison, msgOf(sess)).Status; s != http.StatusOK {
		t.Fatalf("poison: status %d", s)
	}
	failed := e.events(t, sess.GroupID, EvPurgeFailed)
	if len(failed) != 1 || failed[0].Data["what"] != What || failed[0].Data["code"] != CodeRetriesExhausted {
		t.Fatalf("pii.purge_failed events %+v", failed)
	}
	if n := len(portal.calls()); n != 2 {
		t.Fatal("the poison handler called the portal")
	}
}

func TestPoisonAfterSuccessRecordsNothing(t *testing.T) {
	t.Parallel()
	portal := newPortal(t, http.StatusNoContent)
	e := newEnv(t, portal)
	sess, _ := e.session(t, true)
	if s := apptest.InvokeJSON(t, e.job.Handle, msgOf(sess)).Status; s != http.StatusOK {
		t.Fatalf("status %d", s)
	}
	if s := apptest.InvokeJSON(t, e.job.HandlePoison, msgOf(sess)).Status; s != http.StatusOK {
		t.Fatalf("poison: status %d", s)
	}
	if n := len(e.events(t, sess.GroupID, EvPurgeFailed)); n != 0 {
		t.Fatalf("%d pii.purge_failed after a successful purge", n)
	}
}

func TestPurgeRejectedIsRecordedAndAcknowledged(t *testing.T) {
	t.Parallel()
	portal := newPortal(t, http.StatusBadRequest)
	e := newEnv(t, portal)
	sess, _ := e.session(t, true)
	if s := apptest.InvokeJSON(t, e.job.Handle, msgOf(sess)).Status; s != http.StatusOK {
		t.Fatalf("status %d, want 200 (acknowledged)", s)
	}
	failed := e.events(t, sess.GroupID, EvPurgeFailed)
	if len(failed) != 1 || failed[0].Data["code"] != portalclient.CodeRejected || failed[0].Data["what"] != What {
		t.Fatalf("pii.purge_failed events %+v", failed)
	}
	if n := len(e.events(t, sess.GroupID, esign.EvPIIPurged)); n != 0 {
		t.Fatal("pii.purged recorded for a refused purge")
	}
}

func TestPurgeNotConfiguredIsRecordedOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	sess, _ := e.session(t, true)
	for i := 0; i < 2; i++ {
		if s := apptest.InvokeJSON(t, e.job.Handle, msgOf(sess)).Status; s != http.StatusOK {
			t.Fatalf("message %d: status %d", i, s)
		}
	}
	skipped := e.events(t, sess.GroupID, EvPurgeSkipped)
	if len(skipped) != 1 || skipped[0].Data["what"] != What || skipped[0].Data["reason"] != ReasonNotConfigured {
		t.Fatalf("pii.purge_skipped events %+v", skipped)
	}
	if n := len(e.events(t, sess.GroupID, esign.EvPIIPurged)); n != 0 {
		t.Fatal("pii.purged recorded without a portal")
	}
}

func TestPurgeMessagesAcknowledgedWithoutEffect(t *testing.T) {
	t.Parallel()
	portal := newPortal(t, http.StatusOK)
	e := newEnv(t, portal)
	pending, _ := e.session(t, false)
	complete, _ := e.session(t, true)
	tests := []struct {
		name   string
		msg    any
		status int
		group  string
	}{
		{"session not complete", msgOf(pending), http.StatusOK, pending.GroupID},
		{"unknown session", Message{GroupID: "00000000-0000-4000-8000-000000000000", TenantID: "t"}, http.StatusOK, ""},
		{"no tenant", Message{GroupID: complete.GroupID}, http.StatusOK, complete.GroupID},
		{"other tenant", Message{GroupID: complete.GroupID, TenantID: "someone-else"}, http.StatusOK, complete.GroupID},
		{"not an object", "hello", http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if s := apptest.InvokeJSON(t, e.job.Handle, tt.msg).Status; s != tt.status {
				t.Fatalf("status %d, want %d", s, tt.status)
			}
			if tt.group != "" {
				for _, k := range []string{esign.EvPIIPurged, EvPurgeFailed, EvPurgeSkipped} {
					if n := len(e.events(t, tt.group, k)); n != 0 {
						t.Fatalf("%d %s recorded", n, k)
					}
				}
			}
		})
	}
	if n := len(portal.calls()); n != 0 {
		t.Fatalf("%d portal calls for messages that should have no effect", n)
	}
}
