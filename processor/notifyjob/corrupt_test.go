package notifyjob

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify"
)

// The seal fails for good when a session's evidence is unreadable; its requester is still told,
// from the row's plain columns and the seal.failed time (other notices of such a session wait).
func TestSealFailureNoticeOfACorruptSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, nil)
	s, slots := e.session(t, 1, true, nil)
	failedAt := e.Now().Add(3 * time.Minute)
	ch := esign.Change{Events: []esign.Event{{Kind: esign.EvSealFailed, Slot: -1, At: failedAt, Data: map[string]any{"reason": "x"}}}}
	if err := e.st.RecordEvents(ctx, s.GroupID, slots, ch); err != nil {
		t.Fatal(err)
	}
	evs, err := e.raw.Query(ctx, s.GroupID, &tablestore.QueryOptions{RowKeyPrefix: audit.RowPrefix})
	if err != nil || len(evs) < 2 {
		t.Fatalf("events %d %v", len(evs), err)
	}
	for _, m := range []tablestore.Entity{
		{PartitionKey: s.GroupID, RowKey: "session", ETag: "*", Props: map[string]any{"manifest": `[{"name":`}},
		{PartitionKey: s.GroupID, RowKey: evs[0].RowKey, ETag: "*", Props: map[string]any{"data": `{"broken`}},
	} {
		if _, err := e.raw.Merge(ctx, m); err != nil {
			t.Fatal(err)
		}
	}

	r := apptest.InvokeJSON(t, e.job.Handle, esign.NotifyMessage{Kind: string(notify.KindSealFailure), GroupID: s.GroupID, TenantID: "t1", Slot: -1})
	if r.Status != 200 {
		t.Fatalf("status %d logs %v", r.Status, r.Logs)
	}
	checkLogsClean(t, r, requesterEmail)
	rows := e.rows(t)
	if len(rows) != 1 || rows[0].Recipient != requesterEmail || rows[0].Kind != notify.KindSealFailure ||
		!strings.Contains(rows[0].Text, when(failedAt)) {
		t.Fatalf("rows %+v", rows)
	}
	sent, err := e.st.LastEvent(ctx, s.GroupID, EvNotificationSent)
	if err != nil || sent.IsZero() {
		t.Fatalf("notification.sent not recorded: %v", err)
	}

	// Another notice of the session needs the unreadable part: retried, nothing sent.
	r = apptest.InvokeJSON(t, e.job.Handle, esign.NotifyMessage{Kind: string(notify.KindRevokeNotice), GroupID: s.GroupID, TenantID: "t1", Slot: -1})
	if r.Status == 200 || len(e.rows(t)) != 1 {
		t.Fatalf("revoke notice of a corrupt session: status %d, %d rows", r.Status, len(e.rows(t)))
	}
}
