package standins

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// ACS is a Communication Services resource on a loopback port: POST /emails:send
// (api-version 2023-03-31) answering 202 with an Operation-Location that reads Succeeded, GET of
// that operation, and POST /sms (api-version 2021-03-07) answering 202 with one result per
// recipient. Every request is authenticated as the service documents its HMAC scheme: the
// body's SHA-256 in x-ms-content-sha256, x-ms-date within 15 minutes, and
// "HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature=" over
// "METHOD\nrequest-URI\ndate;host;hash" with the resource key; a mismatch is 401. Bodies are
// decoded strictly against the documented fields (an unknown member or a missing required one is
// 400 with the service's error shape).
type ACS struct {
	Key []byte // the resource's access key (ACS_ACCESS_KEY is its base64)

	srv *httptest.Server

	mu     sync.Mutex
	emails []ACSEmail
	sms    []ACSSMS
	denied []string
}

// ACSEmail is one accepted e-mail send.
type ACSEmail struct {
	SenderAddress string
	To            []string
	Subject       string
	PlainText     string
	HTML          string
}

// ACSSMS is one accepted SMS send.
type ACSSMS struct {
	From, To, Message string
}

// StartACS starts the stand-in with a fresh 32-byte key.
func StartACS() (*ACS, error) {
	a := &ACS{Key: make([]byte, 32)}
	if _, err := rand.Read(a.Key); err != nil {
		return nil, err
	}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	return a, nil
}

// Endpoint is ACS_ENDPOINT.
func (a *ACS) Endpoint() string { return a.srv.URL }

// AccessKey is ACS_ACCESS_KEY.
func (a *ACS) AccessKey() string { return base64.StdEncoding.EncodeToString(a.Key) }

// Close stops the server.
func (a *ACS) Close() { a.srv.Close() }

// Emails are the accepted e-mails in arrival order.
func (a *ACS) Emails() []ACSEmail {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ACSEmail(nil), a.emails...)
}

// SMS are the accepted text messages in arrival order.
func (a *ACS) SMS() []ACSSMS {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ACSSMS(nil), a.sms...)
}

// Denied lists why requests were refused (authentication or shape), in order.
func (a *ACS) Denied() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.denied...)
}

func (a *ACS) fail(w http.ResponseWriter, status int, code, reason string) {
	a.mu.Lock()
	a.denied = append(a.denied, reason)
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": reason}})
}

func (a *ACS) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		a.fail(w, http.StatusBadRequest, "BadRequest", "unreadable body")
		return
	}
	if reason := a.authenticate(r, body); reason != "" {
		a.fail(w, http.StatusUnauthorized, "Denied", reason)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/emails:send":
		a.sendEmail(w, r, body)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/emails/operations/"):
		if r.URL.Query().Get("api-version") != "2023-03-31" {
			a.fail(w, http.StatusBadRequest, "InvalidApiVersion", "api-version")
			return
		}
		id := strings.TrimPrefix(r.URL.Path, "/emails/operations/")
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "status": "Succeeded"})
	case r.Method == http.MethodPost && r.URL.Path == "/sms":
		a.sendSMS(w, r, body)
	default:
		a.fail(w, http.StatusNotFound, "NotFound", r.Method+" "+r.URL.Path)
	}
}

func (a *ACS) authenticate(r *http.Request, body []byte) string {
	const prefix = "HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature="
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, prefix) {
		return "authorization is not the HMAC-SHA256 scheme"
	}
	date := r.Header.Get("x-ms-date")
	when, err := time.Parse(time.RFC1123, date)
	if err != nil || !strings.HasSuffix(date, " GMT") {
		return "x-ms-date is not an RFC 1123 GMT date"
	}
	if skew := time.Since(when); skew > 15*time.Minute || skew < -15*time.Minute {
		return "x-ms-date is more than 15 minutes off"
	}
	sum := sha256.Sum256(body)
	hash := base64.StdEncoding.EncodeToString(sum[:])
	if r.Header.Get("x-ms-content-sha256") != hash {
		return "x-ms-content-sha256 is not the body's hash"
	}
	mac := hmac.New(sha256.New, a.Key)
	io.WriteString(mac, r.Method+"\n"+r.URL.RequestURI()+"\n"+date+";"+r.Host+";"+hash)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(strings.TrimPrefix(auth, prefix)), []byte(want)) {
		return "signature mismatch"
	}
	return ""
}

func (a *ACS) sendEmail(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.URL.Query().Get("api-version") != "2023-03-31" {
		a.fail(w, http.StatusBadRequest, "InvalidApiVersion", "e-mail api-version")
		return
	}
	var req struct {
		SenderAddress string `json:"senderAddress"`
		Recipients    struct {
			To []struct {
				Address     string `json:"address"`
				DisplayName string `json:"displayName"`
			} `json:"to"`
		} `json:"recipients"`
		Content struct {
			Subject   string `json:"subject"`
			PlainText string `json:"plainText"`
			HTML      string `json:"html"`
		} `json:"content"`
	}
	if err := strictJSON(body, &req); err != nil {
		a.fail(w, http.StatusBadRequest, "BadRequest", "e-mail body: "+err.Error())
		return
	}
	if req.SenderAddress == "" || len(req.Recipients.To) == 0 || req.Content.Subject == "" ||
		(req.Content.PlainText == "" && req.Content.HTML == "") {
		a.fail(w, http.StatusBadRequest, "BadRequest", "e-mail body: senderAddress, recipients.to, content.subject and a body are required")
		return
	}
	m := ACSEmail{SenderAddress: req.SenderAddress, Subject: req.Content.Subject, PlainText: req.Content.PlainText, HTML: req.Content.HTML}
	for _, to := range req.Recipients.To {
		if to.Address == "" {
			a.fail(w, http.StatusBadRequest, "BadRequest", "e-mail body: recipients.to[].address is required")
			return
		}
		m.To = append(m.To, to.Address)
	}
	a.mu.Lock()
	a.emails = append(a.emails, m)
	a.mu.Unlock()
	id := newID()
	w.Header().Set("Operation-Location", a.srv.URL+"/emails/operations/"+id+"?api-version=2023-03-31")
	w.Header().Set("Retry-After", "1")
	writeJSON(w, http.StatusAccepted, map[string]any{"id": id, "status": "Running"})
}

func (a *ACS) sendSMS(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.URL.Query().Get("api-version") != "2021-03-07" {
		a.fail(w, http.StatusBadRequest, "InvalidApiVersion", "SMS api-version")
		return
	}
	var req struct {
		From          string `json:"from"`
		SMSRecipients []struct {
			To                     string `json:"to"`
			RepeatabilityRequestID string `json:"repeatabilityRequestId"`
			RepeatabilityFirstSent string `json:"repeatabilityFirstSent"`
		} `json:"smsRecipients"`
		Message string `json:"message"`
		Options struct {
			EnableDeliveryReport bool   `json:"enableDeliveryReport"`
			Tag                  string `json:"tag"`
		} `json:"smsSendOptions"`
	}
	if err := strictJSON(body, &req); err != nil {
		a.fail(w, http.StatusBadRequest, "BadRequest", "SMS body: "+err.Error())
		return
	}
	if req.From == "" || len(req.SMSRecipients) == 0 || req.Message == "" {
		a.fail(w, http.StatusBadRequest, "BadRequest", "SMS body: from, smsRecipients and message are required")
		return
	}
	var results []map[string]any
	for _, to := range req.SMSRecipients {
		if !strings.HasPrefix(to.To, "+") {
			a.fail(w, http.StatusBadRequest, "BadRequest", "SMS body: smsRecipients[].to must be E.164")
			return
		}
		a.mu.Lock()
		a.sms = append(a.sms, ACSSMS{From: req.From, To: to.To, Message: req.Message})
		a.mu.Unlock()
		results = append(results, map[string]any{"to": to.To, "messageId": "Outgoing_" + newID(),
			"httpStatusCode": 202, "successful": true})
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"value": results})
}

// strictJSON decodes one JSON value refusing unknown members and trailing data.
func strictJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
