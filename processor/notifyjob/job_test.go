package notifyjob

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify"
)

func TestInvitationSendsTheSlotsLinkOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s, slots := e.session(t, 2, false, nil)
	msg := esign.NotifyMessage{Kind: string(notify.KindInvitation), GroupID: s.GroupID, TenantID: "t1", Slot: 1, LinkJTI: slots[1].LinkJTI}

	r := apptest.InvokeJSON(t, e.job.Handle, msg)
	if r.Status != 200 {
		t.Fatalf("status %d logs %v", r.Status, r.Logs)
	}
	checkLogsClean(t, r)
	rows := e.rows(t)
	if len(rows) != 1 {
		t.Fatalf("%d outbox rows, want 1", len(rows))
	}
	row := rows[0]
	if row.Recipient != signerEmail(1) || row.Subject != "Please sign: Contract 7" || row.Kind != notify.KindInvitation ||
		row.Channel != notify.Email || row.CorrelationID != s.CorrelationID {
		t.Fatalf("row %+v", row)
	}
	for _, want := range []string{"Hello Signer 1,", "Requested by Ann Requester, Acme"} {
		if !strings.Contains(row.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, row.Text)
		}
	}
	// The link carries a slot token for this slot with the slot's current link id.
	i := strings.Index(row.Text, portal+"/sign?token=")
	if i < 0 {
		t.Fatalf("no portal link in:\n%s", row.Text)
	}
	link := strings.Fields(row.Text[i:])[0]
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := e.Tokens.VerifySlot(u.Query().Get("token"))
	if err != nil {
		t.Fatalf("link token does not verify: %v", err)
	}
	if claims.GroupID != s.GroupID || claims.SlotIndex != 1 || claims.ID != slots[1].LinkJTI || !claims.ExpiresAt.Equal(s.ExpiresAt.Truncate(time.Second)) && !claims.ExpiresAt.Equal(s.ExpiresAt) {
		t.Fatalf("token claims %+v", claims)
	}
	checkLogsClean(t, r, u.Query().Get("token"))

	sent := e.events(t, s.GroupID, EvNotificationSent)
	if len(sent) != 1 || sent[0].Slot != 1 || sent[0].Data["kind"] != "invitation" || sent[0].Data["channel"] != "email" ||
		sent[0].ActorKind != "system" || sent[0].EmailHash != "h1" {
		t.Fatalf("notification.sent events %+v", sent)
	}
	for k, v := range sent[0].Data {
		if s, ok := v.(string); ok && strings.Contains(s, "@") {
			t.Fatalf("audit data %s carries an address", k)
		}
	}

	// A redelivery of the same message sends nothing more.
	r = apptest.InvokeJSON(t, e.job.Handle, msg)
	if r.Status != 200 || !strings.Contains(strings.Join(r.Logs, "\n"), "already sent") {
		t.Fatalf("redelivery: status %d logs %v", r.Status, r.Logs)
	}
	if n := len(e.rows(t)); n != 1 {
		t.Fatalf("%d outbox rows after redelivery, want 1", n)
	}
	if n := len(e.events(t, s.GroupID, EvNotificationSent)); n != 1 {
		t.Fatalf("%d notification.sent events after redelivery", n)
	}
	// A reminder for a new link is a new notification.
	msg.Reminder = true
	if r := apptest.InvokeJSON(t, e.job.Handle, msg); r.Status != 200 {
		t.Fatalf("reminder: %d %v", r.Status, r.Logs)
	}
	if rows := e.rows(t); len(rows) != 2 || rows[1].Subject != "New signing link: Contract 7" {
		t.Fatalf("after reminder: %+v", rows)
	}
}

func TestInvitationDroppedWhenNoLongerApplicable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	tests := []struct {
		name   string
		mutate func(*esign.Session, []esign.Slot)
		jti    func(slots []esign.Slot) string
		later  time.Duration
		reason string
	}{
		{"replaced link", nil, func([]esign.Slot) string { return "an-older-link-id" }, 0, "current link"},
		{"no link id", nil, func([]esign.Slot) string { return "" }, 0, "current link"},
		{"cancelled session", func(s *esign.Session, _ []esign.Slot) {
			s.State, s.CancelReason = esign.SessionCancelled, esign.ReasonCancelled
		},
			func(sl []esign.Slot) string { return sl[0].LinkJTI }, 0, "no longer live"},
		{"past expiry", nil, func(sl []esign.Slot) string { return sl[0].LinkJTI }, 2 * time.Hour, "no longer live"},
		{"used link", func(_ *esign.Session, sl []esign.Slot) { sl[0].LinkUsed = true }, func(sl []esign.Slot) string { return sl[0].LinkJTI }, 0, "already used"},
		{"signed slot", func(_ *esign.Session, sl []esign.Slot) { sl[0].State = esign.SlotSigned }, func(sl []esign.Slot) string { return sl[0].LinkJTI }, 0, "slot is signed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, slots := e.session(t, 1, true, tt.mutate)
			job := *e.job
			job.d.Now = func() time.Time { return e.Now().Add(tt.later) }
			r := apptest.InvokeJSON(t, job.Handle, esign.NotifyMessage{Kind: "invitation", GroupID: s.GroupID, Slot: 0, LinkJTI: tt.jti(slots)})
			if r.Status != 200 || !strings.Contains(strings.Join(r.Logs, "\n"), tt.reason) {
				t.Fatalf("status %d logs %v, want ack with %q", r.Status, r.Logs, tt.reason)
			}
			checkLogsClean(t, r)
			if n := len(e.events(t, s.GroupID, EvNotificationSent)); n != 0 {
				t.Fatalf("%d notification.sent events", n)
			}
		})
	}
	if rows := e.rows(t); len(rows) != 0 {
		t.Fatalf("dropped invitations reached the outbox: %d rows", len(rows))
	}
}

func TestRequesterNoticesFollowTheirGates(t *testing.T) {
	t.Parallel()
	signed := func(s *esign.Session, sl []esign.Slot) {
		sl[0].State, sl[0].Timeline[esign.SlotSigned] = esign.SlotSigned, s.CreatedAt.Add(time.Minute)
	}
	declined := func(s *esign.Session, sl []esign.Slot) {
		sl[0].State, sl[0].Timeline[esign.SlotDeclined] = esign.SlotDeclined, s.CreatedAt.Add(time.Minute)
		s.State, s.CancelReason = esign.SessionCancelled, esign.ReasonDeclined
	}
	revoked := func(s *esign.Session, _ []esign.Slot) {
		s.State, s.CancelReason = esign.SessionCancelled, esign.ReasonRevoked
	}
	complete := func(s *esign.Session, sl []esign.Slot) {
		signed(s, sl)
		s.State, s.CompletedAt = esign.SessionComplete, s.CreatedAt.Add(2*time.Minute)
	}
	noPerSigner := func(s *esign.Session, sl []esign.Slot) { signed(s, sl); s.SendPerSignerNotices = false }
	tests := []struct {
		name      string
		kind      notify.Kind
		requester bool
		mutate    func(*esign.Session, []esign.Slot)
		slot      int
		wantTo    string // "" = nothing sent
		wantText  []string
	}{
		{"per-signer notice", notify.KindSignerNotice, true, signed, 0, requesterEmail, []string{"role0", "Contract 7"}},
		{"per-signer notice without requestedByEmail", notify.KindSignerNotice, false, signed, 0, "", nil},
		{"per-signer notice with notices off", notify.KindSignerNotice, true, noPerSigner, 0, "", nil},
		{"per-signer notice for an unsigned slot", notify.KindSignerNotice, true, nil, 0, "", nil},
		{"decline notice", notify.KindDeclineNotice, true, declined, 0, requesterEmail, []string{"role0", "declined", "Contract 7"}},
		{"decline notice without requestedByEmail", notify.KindDeclineNotice, false, declined, 0, "", nil},
		{"decline notice ignores per-signer setting", notify.KindDeclineNotice, true,
			func(s *esign.Session, sl []esign.Slot) { declined(s, sl); s.SendPerSignerNotices = false }, 0, requesterEmail, []string{"declined"}},
		{"revoke notice", notify.KindRevokeNotice, true, revoked, -1, requesterEmail, []string{"revoked", "Contract 7"}},
		{"revoke notice without requestedByEmail", notify.KindRevokeNotice, false, revoked, -1, "", nil},
		{"revoke notice for a session not revoked", notify.KindRevokeNotice, true, nil, -1, "", nil},
		{"documents ready", notify.KindDocumentsReady, true, complete, -1, requesterEmail, []string{"sealed", "Contract 7"}},
		{"documents ready without requestedByEmail", notify.KindDocumentsReady, false, complete, -1, "", nil},
		{"signer completion e-mail", notify.KindSignerCompleted, false, signed, 0, signerEmail(0), []string{"You signed", "Contract 7"}},
		{"no completion e-mail before signing", notify.KindSignerCompleted, true, nil, 0, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			s, _ := e.session(t, 2, tt.requester, tt.mutate)
			r := apptest.InvokeJSON(t, e.job.Handle, esign.NotifyMessage{Kind: string(tt.kind), GroupID: s.GroupID, TenantID: "t1", Slot: tt.slot})
			if r.Status != 200 {
				t.Fatalf("status %d logs %v", r.Status, r.Logs)
			}
			checkLogsClean(t, r, requesterEmail)
			rows := e.rows(t)
			sent := e.events(t, s.GroupID, EvNotificationSent)
			if tt.wantTo == "" {
				if len(rows) != 0 || len(sent) != 0 {
					t.Fatalf("sent %d messages (%d events), want none", len(rows), len(sent))
				}
				if !strings.Contains(strings.Join(r.Logs, "\n"), "not sent") {
					t.Fatalf("logs %v do not say why nothing was sent", r.Logs)
				}
				return
			}
			if len(rows) != 1 || rows[0].Recipient != tt.wantTo || rows[0].Kind != tt.kind || !strings.HasSuffix(rows[0].Subject, "Contract 7") {
				t.Fatalf("rows %+v", rows)
			}
			for _, w := range tt.wantText {
				if !strings.Contains(rows[0].Text, w) {
					t.Errorf("text lacks %q:\n%s", w, rows[0].Text)
				}
			}
			if strings.Contains(rows[0].Text+rows[0].HTML, "signer0@") || strings.Contains(rows[0].Text+rows[0].HTML, "signer1@") {
				t.Errorf("body carries a signer's address:\n%s", rows[0].Text)
			}
			wantSlot := -1
			if tt.kind == notify.KindSignerCompleted {
				wantSlot = tt.slot
			}
			if len(sent) != 1 || sent[0].Slot != wantSlot || sent[0].Data["kind"] != string(tt.kind) {
				t.Fatalf("events %+v", sent)
			}
		})
	}
}

// failingSender fails with err (then succeeds once err is nil).
type failingSender struct {
	err  error
	sent []notify.Message
}

func (f *failingSender) Send(_ context.Context, m notify.Message) error {
	if f.err != nil {
		return f.err
	}
	f.sent = append(f.sent, m)
	return nil
}

func TestProviderFailures(t *testing.T) {
	t.Parallel()
	t.Run("retryable then succeeds", func(t *testing.T) {
		t.Parallel()
		f := &failingSender{err: apperr.New(apperr.KindUnavailable, "notification_unavailable", "down")}
		e := newEnv(t, f)
		s, slots := e.session(t, 1, false, nil)
		msg := esign.NotifyMessage{Kind: "invitation", GroupID: s.GroupID, Slot: 0, LinkJTI: slots[0].LinkJTI}
		if r := apptest.InvokeJSON(t, e.job.Handle, msg); r.Status != 500 {
			t.Fatalf("status %d, want 500 (retry): %v", r.Status, r.Logs)
		}
		f.err = nil // the claim was given back: the retry sends
		if r := apptest.InvokeJSON(t, e.job.Handle, msg); r.Status != 200 || len(f.sent) != 1 {
			t.Fatalf("retry: status %d, %d sent: %v", r.Status, len(f.sent), r.Logs)
		}
	})
	t.Run("refusal is permanent and recorded", func(t *testing.T) {
		t.Parallel()
		f := &failingSender{err: apperr.New(apperr.KindInvalid, "notification_rejected", "refused")}
		e := newEnv(t, f)
		s, slots := e.session(t, 1, false, nil)
		r := apptest.InvokeJSON(t, e.job.Handle, esign.NotifyMessage{Kind: "invitation", GroupID: s.GroupID, Slot: 0, LinkJTI: slots[0].LinkJTI})
		if r.Status != 200 || !strings.Contains(strings.Join(r.Logs, "\n"), "permanent") {
			t.Fatalf("status %d logs %v, want a permanent ack", r.Status, r.Logs)
		}
		failed := e.events(t, s.GroupID, EvNotificationFailed)
		if len(failed) != 1 || failed[0].Data["code"] != "notification_rejected" || failed[0].Slot != 0 {
			t.Fatalf("failed events %+v", failed)
		}
	})
	t.Run("unknown kind and session are acknowledged", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		s, _ := e.session(t, 1, false, nil)
		for _, m := range []esign.NotifyMessage{{Kind: "fax", GroupID: s.GroupID}, {Kind: "invitation", GroupID: "no-such-session"}, {Kind: "invitation"},
			{Kind: "invitation", GroupID: s.GroupID, TenantID: "another-tenant", Slot: 0}} {
			if r := apptest.InvokeJSON(t, e.job.Handle, m); r.Status != 200 || !strings.Contains(strings.Join(r.Logs, "\n"), "permanent") {
				t.Fatalf("%+v: status %d logs %v", m, r.Status, r.Logs)
			}
		}
	})
}

func TestPoisonRecordsFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s, _ := e.session(t, 2, true, nil)
	r := apptest.InvokeJSON(t, e.job.HandlePoison, esign.NotifyMessage{Kind: string(notify.KindSignerNotice), GroupID: s.GroupID, Slot: 1})
	if r.Status != 200 {
		t.Fatalf("status %d logs %v", r.Status, r.Logs)
	}
	checkLogsClean(t, r)
	failed := e.events(t, s.GroupID, EvNotificationFailed)
	if len(failed) != 1 || failed[0].Data["kind"] != string(notify.KindSignerNotice) || failed[0].Data["slot"] != float64(1) ||
		failed[0].Slot != -1 || failed[0].Data["code"] != "retries_exhausted" {
		t.Fatalf("failed events %+v", failed)
	}
	if r := apptest.InvokeJSON(t, e.job.HandlePoison, esign.NotifyMessage{Kind: "invitation", GroupID: "gone"}); r.Status != 200 {
		t.Fatalf("unknown session: %d", r.Status)
	}
	if len(e.rows(t)) != 0 {
		t.Fatal("the poison handler sent something")
	}
}
