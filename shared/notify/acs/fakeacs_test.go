package acs

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeACS is a local stand-in for a Communication Services resource. It authenticates every
// request the way the service documents it, written here independently of sign.go: it
// recomputes the body hash and the HMAC over the request as received (method, request URI,
// x-ms-date, Host header, hash) and answers 401 on any mismatch or on a date more than 15
// minutes off its own clock. In bearer mode it accepts exactly one token instead.
type fakeACS struct {
	srv    *httptest.Server
	key    []byte
	bearer string

	mu       sync.Mutex
	requests []seenRequest
	// reply answers authenticated requests; nil answers 404.
	reply func(w http.ResponseWriter, r seenRequest)
}

type seenRequest struct {
	Method, URI string
	Header      http.Header
	Body        []byte
}

func newFakeACS(t *testing.T, key []byte, reply func(w http.ResponseWriter, r seenRequest)) *fakeACS {
	t.Helper()
	f := &fakeACS{key: key, reply: reply}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeACS) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if reason := f.authenticate(r, body); reason != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "Denied", "message": reason}})
		return
	}
	seen := seenRequest{Method: r.Method, URI: r.RequestURI, Header: r.Header.Clone(), Body: body}
	f.mu.Lock()
	f.requests = append(f.requests, seen)
	reply := f.reply
	f.mu.Unlock()
	if reply == nil {
		http.NotFound(w, r)
		return
	}
	reply(w, seen)
}

func (f *fakeACS) authenticate(r *http.Request, body []byte) string {
	auth := r.Header.Get("Authorization")
	if f.bearer != "" {
		if !hmac.Equal([]byte(auth), []byte("Bearer "+f.bearer)) {
			return "bad bearer token"
		}
		return ""
	}
	const prefix = "HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature="
	if !strings.HasPrefix(auth, prefix) {
		return "bad authorization scheme"
	}
	date := r.Header.Get("x-ms-date")
	when, err := time.Parse(time.RFC1123, date)
	if err != nil || !strings.HasSuffix(date, " GMT") {
		return "x-ms-date is not RFC 1123 GMT"
	}
	if skew := time.Since(when); skew > 15*time.Minute || skew < -15*time.Minute {
		return "x-ms-date too far from now"
	}
	digest := sha256.Sum256(body)
	hash := base64.StdEncoding.EncodeToString(digest[:])
	if r.Header.Get("x-ms-content-sha256") != hash {
		return "content hash mismatch"
	}
	mac := hmac.New(sha256.New, f.key)
	io.WriteString(mac, r.Method+"\n"+r.RequestURI+"\n"+date+";"+r.Host+";"+hash)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(strings.TrimPrefix(auth, prefix)), []byte(want)) {
		return "signature mismatch"
	}
	return ""
}

func (f *fakeACS) seen() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.requests...)
}

func jsonReply(status int, header map[string]string, body any) func(w http.ResponseWriter, r seenRequest) {
	return func(w http.ResponseWriter, _ seenRequest) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if body != nil {
			_ = json.NewEncoder(w).Encode(body)
		}
	}
}
