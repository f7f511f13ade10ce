package acs

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/notify"
)

// EmailAPIVersion is the Email "Send" REST api-version used (generally available since
// 2023-03-31).
const EmailAPIVersion = "2023-03-31"

// EmailSender sends notify.Email messages with POST {endpoint}/emails:send.
type EmailSender struct {
	c            *client
	sender       string
	wait         time.Duration
	pollInterval time.Duration
}

var _ notify.Sender = (*EmailSender)(nil)

// NewEmail makes an e-mail sender. It fails when the endpoint, the authentication or
// EmailSender is missing; the error names the setting.
func NewEmail(cfg Config) (*EmailSender, error) {
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	if !plausibleEmail(cfg.EmailSender) {
		return nil, errors.New("acs: setting " + SettingEmailSender + ": must be an e-mail address")
	}
	return &EmailSender{c: c, sender: cfg.EmailSender, wait: cfg.EmailWait, pollInterval: time.Second}, nil
}

type emailAddress struct {
	Address string `json:"address"`
}

type emailRequest struct {
	SenderAddress string `json:"senderAddress"`
	Recipients    struct {
		To []emailAddress `json:"to"`
	} `json:"recipients"`
	Content struct {
		Subject   string `json:"subject"`
		PlainText string `json:"plainText,omitempty"`
		HTML      string `json:"html,omitempty"`
	} `json:"content"`
}

// emailOperation is the body of the 202 answer and of the operation status.
type emailOperation struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Error  *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// Send submits the e-mail. Errors (*apperr.Error): CodeInvalidMessage for a message that is not
// a valid e-mail; CodeUnavailable (KindUnavailable, RetryAfter set from the answer) when ACS is
// unreachable, times out, throttles or answers 5xx; CodeAuthRefused on 401/403; CodeRefused on
// another 4xx or when the operation ends Failed or Canceled.
//
// After the 202 the operation is polled for up to the configured wait. If it is still running
// then, or its status cannot be read, Send reports success: the service accepted the message and
// sending it again would deliver it twice.
func (s *EmailSender) Send(ctx context.Context, m notify.Message) error {
	if err := m.Validate(); err != nil {
		return invalidMessage(err)
	}
	if m.Channel != notify.Email {
		return apperr.New(apperr.KindInvalid, CodeInvalidMessage, "the ACS e-mail sender got a %s message", m.Channel)
	}
	if !plausibleEmail(m.To) {
		return apperr.Invalid(CodeInvalidMessage, apperr.Field("to", "not an e-mail address"))
	}
	var req emailRequest
	req.SenderAddress = s.sender
	req.Recipients.To = []emailAddress{{Address: m.To}}
	req.Content.Subject = m.Subject
	req.Content.PlainText = m.Text
	req.Content.HTML = m.HTML
	body, err := json.Marshal(req)
	if err != nil {
		return apperr.Wrap(err, apperr.KindInternal, notify.CodeRequest, "encode e-mail")
	}
	resp, err := s.c.do(ctx, http.MethodPost, s.c.url("/emails:send", EmailAPIVersion), body)
	if err != nil {
		return err
	}
	if resp.status != http.StatusAccepted && resp.status != http.StatusOK {
		return statusError(resp, "e-mail send")
	}
	var op emailOperation
	_ = json.Unmarshal(resp.body, &op)
	if err := opResult(op); err != nil || op.Status == "Succeeded" || s.wait <= 0 {
		return err
	}
	loc, ok := s.operationURL(resp.header.Get("Operation-Location"))
	if !ok {
		return nil
	}
	return s.poll(ctx, loc, retryAfter(resp.header, time.Now()))
}

// operationURL accepts the Operation-Location only on the configured endpoint's scheme and host,
// so credentials are never sent elsewhere.
func (s *EmailSender) operationURL(v string) (*url.URL, bool) {
	u, err := url.Parse(v)
	if err != nil || v == "" {
		return nil, false
	}
	u = s.c.base.ResolveReference(u)
	return u, u.Scheme == s.c.base.Scheme && u.Host == s.c.base.Host
}

// poll reads the operation until it ends or the wait is over.
func (s *EmailSender) poll(ctx context.Context, loc *url.URL, delay time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, s.wait)
	defer cancel()
	for {
		if delay <= 0 {
			delay = s.pollInterval
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil // still running when the wait ended: accepted counts as sent
		case <-t.C:
		}
		resp, err := s.c.do(ctx, http.MethodGet, loc, nil)
		if err != nil || resp.status != http.StatusOK {
			return nil // status unknown: see Send
		}
		var op emailOperation
		if json.Unmarshal(resp.body, &op) != nil {
			return nil
		}
		if err := opResult(op); err != nil || op.Status == "Succeeded" {
			return err
		}
		delay = retryAfter(resp.header, time.Now())
	}
}

// opResult is the error for a finished failed operation, nil otherwise.
func opResult(op emailOperation) error {
	switch op.Status {
	case "Failed", "Canceled":
		detail := "ACS e-mail operation " + op.Status
		if op.Error != nil {
			if c := safeCode(op.Error.Code); c != "" {
				detail += " (" + c + ")"
			}
		}
		return apperr.New(apperr.KindInvalid, CodeRefused, "%s", detail)
	}
	return nil
}
