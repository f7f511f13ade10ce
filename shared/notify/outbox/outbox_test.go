package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox/storetest"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

func TestSendStoresRowsInSendOrder(t *testing.T) {
	t.Parallel()
	ctx, o := context.Background(), storetest.New(t)
	// Two messages stamped with the same nanosecond, then one on the next UTC day: send order is
	// kept and the keys stay apart.
	at := time.Date(2026, 11, 22, 23, 59, 59, 999999999, time.UTC)
	clock := []time.Time{at, at, at.Add(time.Nanosecond)}
	o.SetClock(func() time.Time { t := clock[0]; clock = clock[1:]; return t })
	msgs := []notify.Message{
		{Channel: notify.Email, Kind: notify.KindInvitation, To: "a@example.com", Subject: "S1", Text: "T1", HTML: "<p>1</p>", CorrelationID: "C1"},
		{Channel: notify.SMS, Kind: notify.KindOTP, To: "+441234567890", Text: "T2"},
		{Channel: notify.Email, Kind: notify.KindSignerCompleted, To: "b@example.com", Subject: "S3", Text: "T3"},
	}
	for _, m := range msgs {
		if err := o.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := o.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	want := []struct {
		to, subject, text string
		ch                notify.Channel
	}{{"a@example.com", "S1", "T1", notify.Email}, {"+441234567890", "", "T2", notify.SMS}, {"b@example.com", "S3", "T3", notify.Email}}
	for i, w := range want {
		r := rows[i]
		if r.Recipient != w.to || r.Subject != w.subject || r.Text != w.text || r.Channel != w.ch {
			t.Errorf("row %d = %+v, want %+v", i, r, w)
		}
	}
	if rows[0].HTML != "<p>1</p>" || rows[0].CorrelationID != "C1" || rows[0].Kind != notify.KindInvitation || !rows[0].SentAt.Equal(at.Truncate(100*time.Nanosecond)) || !rows[2].SentAt.After(at) {
		t.Errorf("row 0 = %+v", rows[0])
	}
	if rows[0].Key == rows[1].Key {
		t.Error("two messages in one nanosecond share a key")
	}
}

func TestSendRefusesIncompleteMessages(t *testing.T) {
	t.Parallel()
	o := storetest.New(t)
	tests := []struct {
		name string
		m    notify.Message
	}{
		{"no recipient", notify.Message{Channel: notify.Email, Kind: notify.KindInvitation, Subject: "s", Text: "t"}},
		{"no subject", notify.Message{Channel: notify.Email, Kind: notify.KindInvitation, To: "a@example.com", Text: "t"}},
		{"unknown channel", notify.Message{Channel: "fax", To: "a", Text: "t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := o.Send(context.Background(), tt.m)
			if apperr.KindOf(err) != apperr.KindInvalid {
				t.Fatalf("err %v, want KindInvalid", err)
			}
		})
	}
	rows, err := o.List(context.Background())
	if err != nil || len(rows) != 0 {
		t.Fatalf("rows %v err %v, want none", rows, err)
	}
}
