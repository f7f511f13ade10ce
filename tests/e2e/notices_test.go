package e2e

import (
	"context"
	"net/http"
	"testing"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/notify/outbox"
)

// noticesFor lists the outbox rows of a kind for one session (by correlationId).
func noticesFor(t *testing.T, corr, kind string) []outbox.Row {
	t.Helper()
	var out []outbox.Row
	for _, r := range allMail(t) {
		if r.CorrelationID == corr && string(r.Kind) == kind {
			out = append(out, r)
		}
	}
	return out
}

// allMail reads every outbox row in send order.
func allMail(t *testing.T) []outbox.Row {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.New(acct, "")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ob.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestRequesterNoticesFollowTheirGates walks sessions whose requester settings differ and
// checks each requester notice is sent exactly when its gate allows (spec, Events table).
// Absence is checked only after a later message of the same session has arrived.
func TestRequesterNoticesFollowTheirGates(t *testing.T) {
	t.Parallel()
	t.Run("per-signer and documents-ready with requestedByEmail", func(t *testing.T) {
		t.Parallel()
		body := createBody(t, "parallel", 2)
		req := email(7)
		body["requestedByEmail"] = req
		r := createSession(t, tenantA, body)
		links := slotsOf(t, r, "slots")
		corr := body["correlationId"].(string)
		sign(t, links[0].Link)
		eventually(t, "first per-signer notice", func() bool { return len(noticesFor(t, corr, "requester_signer_notice")) == 1 })
		sign(t, links[1].Link)
		eventually(t, "documents-ready notice", func() bool { return len(noticesFor(t, corr, "requester_documents_ready")) == 1 })
		eventually(t, "second per-signer notice", func() bool { return len(noticesFor(t, corr, "requester_signer_notice")) == 2 })
		for _, n := range append(noticesFor(t, corr, "requester_signer_notice"), noticesFor(t, corr, "requester_documents_ready")...) {
			if n.Recipient != req {
				t.Fatalf("a requester notice went to another address")
			}
		}
	})
	t.Run("sendPerSignerNotices false", func(t *testing.T) {
		t.Parallel()
		body := createBody(t, "parallel", 2)
		body["requestedByEmail"] = email(7)
		body["sendPerSignerNotices"] = false
		r := createSession(t, tenantA, body)
		links := slotsOf(t, r, "slots")
		corr := body["correlationId"].(string)
		sign(t, links[0].Link)
		sign(t, links[1].Link)
		eventually(t, "documents-ready notice", func() bool { return len(noticesFor(t, corr, "requester_documents_ready")) == 1 })
		if n := noticesFor(t, corr, "requester_signer_notice"); len(n) != 0 {
			t.Fatalf("%d per-signer notices sent with sendPerSignerNotices false", len(n))
		}
	})
	t.Run("single mode defaults to no per-signer notice", func(t *testing.T) {
		t.Parallel()
		body := createBody(t, "single", 1)
		body["requestedByEmail"] = email(7)
		r := createSession(t, tenantA, body)
		corr := body["correlationId"].(string)
		sign(t, slotsOf(t, r, "slots")[0].Link)
		eventually(t, "documents-ready notice", func() bool { return len(noticesFor(t, corr, "requester_documents_ready")) == 1 })
		if n := noticesFor(t, corr, "requester_signer_notice"); len(n) != 0 {
			t.Fatalf("%d per-signer notices in single mode", len(n))
		}
	})
	t.Run("no requestedByEmail, nothing to the requester", func(t *testing.T) {
		t.Parallel()
		body := createBody(t, "parallel", 2)
		r := createSession(t, tenantA, body)
		links := slotsOf(t, r, "slots")
		corr := body["correlationId"].(string)
		sign(t, links[0].Link)
		sign(t, links[1].Link)
		eventually(t, "signers' completion e-mails", func() bool { return len(noticesFor(t, corr, "signer_completed")) == 2 })
		for _, kind := range []string{"requester_signer_notice", "requester_documents_ready", "requester_decline_notice", "requester_revoke_notice"} {
			if n := noticesFor(t, corr, kind); len(n) != 0 {
				t.Fatalf("%d %s without requestedByEmail", len(n), kind)
			}
		}
	})
	t.Run("decline and revoke notices with requestedByEmail", func(t *testing.T) {
		t.Parallel()
		body := createBody(t, "parallel", 2)
		body["requestedByEmail"] = email(7)
		r := createSession(t, tenantA, body)
		corr := body["correlationId"].(string)
		rd := walk(t, slotsOf(t, r, "slots")[1].Link)
		if d := portal(t, "POST", "decline", rd.Access, map[string]any{"reason": "not mine"}); d.Status != http.StatusOK {
			t.Fatalf("decline %d %s", d.Status, d.Raw)
		}
		eventually(t, "decline notice", func() bool { return len(noticesFor(t, corr, "requester_decline_notice")) == 1 })

		body2 := createBody(t, "parallel", 2)
		body2["requestedByEmail"] = email(7)
		r2 := createSession(t, tenantA, body2)
		rv := call(t, "POST", svc.url("esign/session/"+r2.str("groupId")+"/revoke"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
		if rv.Status != http.StatusOK {
			t.Fatalf("revoke %d %s", rv.Status, rv.Raw)
		}
		eventually(t, "revoke notice", func() bool {
			return len(noticesFor(t, body2["correlationId"].(string), "requester_revoke_notice")) == 1
		})
	})
}
