package seal

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/pdf/certificate"
)

func TestOTPRecordAndTransfers(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 22, 10, 0, 0, 1, time.UTC)
	sl := esign.Slot{Index: 0, OTPChannel: esign.OTPSMS}
	tests := []struct {
		name   string
		events []sessionstore.AuditEvent
		otp    *certificate.OTPRecord
		tr     []certificate.Transfer
	}{
		{"no OTP or transfer events", []sessionstore.AuditEvent{{Kind: "slot.viewed", At: at}}, nil, nil},
		{"sent, failed once, verified", []sessionstore.AuditEvent{
			{Kind: "slot.otp_sent", At: at, Data: map[string]any{"channel": "sms", "destination": "+44******789"}},
			{Kind: "slot.otp_failed", At: at.Add(time.Second)},
			{Kind: "slot.otp_verified", At: at.Add(2 * time.Second)},
		}, &certificate.OTPRecord{Channel: "sms", MaskedDestination: "+44******789", SentAt: at, VerifiedAt: at.Add(2 * time.Second), Attempts: 2}, nil},
		{"an unmasked destination is not shown", []sessionstore.AuditEvent{
			{Kind: "slot.otp_sent", At: at, Data: map[string]any{"destination": "+447700900789"}},
		}, &certificate.OTPRecord{Channel: "sms", SentAt: at}, nil},
		{"transfers", []sessionstore.AuditEvent{
			{Kind: "slot.transfer_created", At: at, IP: "198.51.100.1", UserAgent: "desk"},
			{Kind: "slot.transfer_redeemed", At: at.Add(time.Minute), IP: "198.51.100.2", UserAgent: "phone"},
		}, nil, []certificate.Transfer{{Event: "created", At: at, IPAddress: "198.51.100.1", UserAgent: "desk"},
			{Event: "redeemed", At: at.Add(time.Minute), IPAddress: "198.51.100.2", UserAgent: "phone"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.otp, otpRecord(sl, tt.events)); diff != "" {
				t.Errorf("otp (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.tr, transfers(tt.events)); diff != "" {
				t.Errorf("transfers (-want +got):\n%s", diff)
			}
		})
	}
}
