package acs

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/notify"
)

func testSMS() notify.Message {
	return notify.Message{Channel: notify.SMS, Kind: notify.KindOTP, To: testPhone, Text: testBody}
}

func smsResult(successful bool, status int) map[string]any {
	return map[string]any{"value": []any{map[string]any{
		"to": testPhone, "messageId": "Outgoing_1", "httpStatusCode": status, "successful": successful,
		"repeatabilityResult": "accepted", "errorMessage": "Recipient " + testPhone + " failed",
	}}}
}

func TestSMSAccepted(t *testing.T) {
	t.Parallel()
	f := newFakeACS(t, testKey, func(w http.ResponseWriter, r seenRequest) {
		if r.Method != http.MethodPost || r.URI != "/sms?api-version=2021-03-07" {
			http.NotFound(w, nil)
			return
		}
		jsonReply(http.StatusAccepted, nil, smsResult(true, 202))(w, r)
	})
	s, err := NewSMS(testConfig(t, f))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(context.Background(), testSMS()); err != nil {
		t.Fatal(err)
	}
	reqs := f.seen()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d", len(reqs))
	}
	var got map[string]any
	if err := json.Unmarshal(reqs[0].Body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"from":           "+18005550100",
		"smsRecipients":  []any{map[string]any{"to": testPhone}},
		"message":        testBody,
		"smsSendOptions": map[string]any{"enableDeliveryReport": false},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("request body (-want +got):\n%s", d)
	}
}

func TestSMSFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   any
		header map[string]string
		kind   apperr.Kind
		code   string
	}{
		{name: "recipient refused", status: 202, body: smsResult(false, 400), kind: apperr.KindInvalid, code: CodeRefused},
		{name: "recipient throttled", status: 202, body: smsResult(false, 429), kind: apperr.KindUnavailable, code: CodeUnavailable},
		{name: "recipient 503", status: 202, body: smsResult(false, 503), kind: apperr.KindUnavailable, code: CodeUnavailable},
		{name: "no recipient result", status: 202, body: map[string]any{"value": []any{}}, kind: apperr.KindUnavailable, code: CodeUnavailable},
		{name: "request refused", status: 400, body: map[string]any{"error": map[string]string{"code": "InvalidInput"}}, kind: apperr.KindInvalid, code: CodeRefused},
		{name: "throttled", status: 429, header: map[string]string{"Retry-After": "3"}, kind: apperr.KindUnavailable, code: CodeUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeACS(t, testKey, jsonReply(tc.status, tc.header, tc.body))
			s, err := NewSMS(testConfig(t, f))
			if err != nil {
				t.Fatal(err)
			}
			err = s.Send(context.Background(), testSMS())
			e, ok := apperr.As(err)
			if !ok || e.Kind != tc.kind || e.Code != tc.code {
				t.Fatalf("err = %v", err)
			}
			assertSafe(t, err)
		})
	}
}

func TestSMSRejectsBadRecipient(t *testing.T) {
	t.Parallel()
	f := newFakeACS(t, testKey, jsonReply(202, nil, smsResult(true, 202)))
	s, err := NewSMS(testConfig(t, f))
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"15557654321", "+1 555 765", "+1555abc4321", "+1234"} {
		m := testSMS()
		m.To = to
		err := s.Send(context.Background(), m)
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindInvalid || e.Code != CodeInvalidMessage {
			t.Errorf("%q: err = %v", to, err)
		}
	}
	if n := len(f.seen()); n != 0 {
		t.Errorf("%d requests reached the service", n)
	}
}
