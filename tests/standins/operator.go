package standins

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Operator is the operator's notification service on a loopback port (EMAIL_PROVIDER
// operator): POST /v1/messages, signed as every signed POST of the service is
// ("X-Esign-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(key, t + "." + raw body)>", 300 s
// tolerance; checked here independently of package callbacksig), with an Idempotency-Key; the
// body is {channel, kind, to, subject?, text, html?, correlationId?}, decoded strictly. A bad
// signature is 401, a malformed body 400, a repeated Idempotency-Key 202 without a second
// message.
type Operator struct {
	Key string

	srv *httptest.Server

	mu       sync.Mutex
	messages []OperatorMessage
	keys     map[string]bool
	denied   []string
}

// OperatorMessage is one accepted message.
type OperatorMessage struct {
	IdempotencyKey string
	Channel, Kind  string
	To             string
	Subject        string
	Text, HTML     string
	CorrelationID  string
}

// StartOperator starts the stand-in; key is NOTIFICATION_SERVICE_KEY.
func StartOperator(key string) *Operator {
	o := &Operator{Key: key, keys: map[string]bool{}}
	o.srv = httptest.NewServer(http.HandlerFunc(o.serve))
	return o
}

// URL is NOTIFICATION_SERVICE_URL.
func (o *Operator) URL() string { return o.srv.URL }

// Close stops the server.
func (o *Operator) Close() { o.srv.Close() }

// Messages are the accepted messages in arrival order (each idempotency key once).
func (o *Operator) Messages() []OperatorMessage {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]OperatorMessage(nil), o.messages...)
}

// Denied lists why requests were refused, in order.
func (o *Operator) Denied() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.denied...)
}

func (o *Operator) fail(w http.ResponseWriter, status int, reason string) {
	o.mu.Lock()
	o.denied = append(o.denied, reason)
	o.mu.Unlock()
	writeJSON(w, status, map[string]string{"error": reason})
}

func (o *Operator) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		o.fail(w, http.StatusNotFound, r.Method+" "+r.URL.Path)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		o.fail(w, http.StatusBadRequest, "unreadable body")
		return
	}
	if reason := o.verify(r.Header.Get("X-Esign-Signature"), body); reason != "" {
		o.fail(w, http.StatusUnauthorized, reason)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		o.fail(w, http.StatusUnsupportedMediaType, "content type "+ct)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		o.fail(w, http.StatusBadRequest, "no Idempotency-Key")
		return
	}
	var m struct {
		Channel       string `json:"channel"`
		Kind          string `json:"kind"`
		To            string `json:"to"`
		Subject       string `json:"subject"`
		Text          string `json:"text"`
		HTML          string `json:"html"`
		CorrelationID string `json:"correlationId"`
	}
	if err := strictJSON(body, &m); err != nil {
		o.fail(w, http.StatusBadRequest, "body: "+err.Error())
		return
	}
	if (m.Channel != "email" && m.Channel != "sms") || m.Kind == "" || m.To == "" || m.Text == "" ||
		(m.Channel == "email" && m.Subject == "") {
		o.fail(w, http.StatusBadRequest, "body: channel (email or sms), kind, to, text and an e-mail's subject are required")
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.keys[key] {
		o.keys[key] = true
		o.messages = append(o.messages, OperatorMessage{IdempotencyKey: key, Channel: m.Channel, Kind: m.Kind, To: m.To,
			Subject: m.Subject, Text: m.Text, HTML: m.HTML, CorrelationID: m.CorrelationID})
	}
	w.WriteHeader(http.StatusAccepted)
}

// verify checks the signature header: one t, at least one v1, t within 300 s, and a v1 equal to
// the HMAC of t + "." + body (constant-time).
func (o *Operator) verify(header string, body []byte) string {
	if header == "" {
		return "no signature"
	}
	var ts string
	var sigs []string
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case !ok:
			return "malformed signature"
		case k == "t":
			if ts != "" {
				return "two timestamps"
			}
			ts = v
		case k == "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return "malformed signature"
	}
	if d := time.Since(time.Unix(sec, 0)); d > 300*time.Second || d < -300*time.Second {
		return "signature too old"
	}
	mac := hmac.New(sha256.New, []byte(o.Key))
	io.WriteString(mac, ts+".")
	mac.Write(body)
	want := hex.EncodeToString(mac.Sum(nil))
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return ""
		}
	}
	return "signature mismatch"
}
