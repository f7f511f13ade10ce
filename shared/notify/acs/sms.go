package acs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/notify"
)

// SMSAPIVersion is the SMS "Send" REST api-version used.
const SMSAPIVersion = "2021-03-07"

// SMSSender sends notify.SMS messages with POST {endpoint}/sms.
type SMSSender struct {
	c    *client
	from string
}

var _ notify.Sender = (*SMSSender)(nil)

// NewSMS makes an SMS sender. It fails when the endpoint, the authentication or SMSFrom is
// missing or malformed; the error names the setting.
func NewSMS(cfg Config) (*SMSSender, error) {
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	if !validFrom(cfg.SMSFrom) {
		return nil, errors.New("acs: setting " + SettingSMSFrom + ": must be an E.164 number or a short code")
	}
	return &SMSSender{c: c, from: cfg.SMSFrom}, nil
}

type smsRequest struct {
	From          string         `json:"from"`
	SMSRecipients []smsRecipient `json:"smsRecipients"`
	Message       string         `json:"message"`
	Options       smsOptions     `json:"smsSendOptions"`
}

type smsRecipient struct {
	To string `json:"to"`
}

type smsOptions struct {
	EnableDeliveryReport bool `json:"enableDeliveryReport"`
}

type smsResponse struct {
	Value []struct {
		HTTPStatusCode int  `json:"httpStatusCode"`
		Successful     bool `json:"successful"`
	} `json:"value"`
}

// Send submits the SMS (Text only). Errors (*apperr.Error): CodeInvalidMessage when the message
// is not an SMS or the recipient is not E.164; CodeUnavailable (KindUnavailable, with RetryAfter
// when given) when ACS is unreachable, throttles or answers 5xx, or the recipient's own result
// says 429/5xx; CodeAuthRefused on 401/403; CodeRefused on another 4xx or a failed recipient
// result. The per-recipient errorMessage is not copied (it may repeat the number).
func (s *SMSSender) Send(ctx context.Context, m notify.Message) error {
	if err := m.Validate(); err != nil {
		return invalidMessage(err)
	}
	if m.Channel != notify.SMS {
		return apperr.New(apperr.KindInvalid, CodeInvalidMessage, "the ACS SMS sender got a %s message", m.Channel)
	}
	if len(m.To) < 8 || m.To[0] != '+' || !validFrom(m.To) {
		return apperr.Invalid(CodeInvalidMessage, apperr.Field("to", "not an E.164 phone number"))
	}
	body, err := json.Marshal(smsRequest{
		From:          s.from,
		SMSRecipients: []smsRecipient{{To: m.To}},
		Message:       m.Text,
		Options:       smsOptions{EnableDeliveryReport: false},
	})
	if err != nil {
		return apperr.Wrap(err, apperr.KindInternal, notify.CodeRequest, "encode SMS")
	}
	resp, err := s.c.do(ctx, http.MethodPost, s.c.url("/sms", SMSAPIVersion), body)
	if err != nil {
		return err
	}
	if resp.status != http.StatusAccepted && resp.status != http.StatusOK {
		return statusError(resp, "SMS send")
	}
	var out smsResponse
	if err := json.Unmarshal(resp.body, &out); err != nil || len(out.Value) != 1 {
		// ACS answers one result per recipient; without it the outcome is unknown and the
		// answer broken, so the caller may retry.
		return apperr.New(apperr.KindUnavailable, CodeUnavailable, "ACS SMS send answered %d without a recipient result", resp.status)
	}
	r := out.Value[0]
	if r.Successful {
		return nil
	}
	detail := fmt.Sprintf("ACS SMS recipient result %d", r.HTTPStatusCode)
	if r.HTTPStatusCode == http.StatusTooManyRequests || r.HTTPStatusCode >= 500 {
		return apperr.New(apperr.KindUnavailable, CodeUnavailable, "%s", detail)
	}
	return apperr.New(apperr.KindInvalid, CodeRefused, "%s", detail)
}
