package fault

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/esign-svc/esign/shared/pdf/cms"
)

// tsa is an RFC 3161 time-stamping authority (SEAL_TSA_URL) the tests steer: it answers at once,
// holds each request until released (a seal held in its middle), or fails (a seal that keeps
// failing until its message is poisoned). It counts the requests it granted: one per seal.
type tsa struct {
	url     string
	srv     *httptest.Server
	granted atomic.Int64

	mu      sync.Mutex
	failing bool
	hold    chan struct{} // non-nil: requests wait for it to close
	arrived chan struct{} // a held request arrived
}

func startTSA() (*tsa, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fault test TSA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	t := &tsa{}
	var serial atomic.Int64
	t.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/timestamp-query" {
			http.Error(w, "want POST application/timestamp-query", http.StatusBadRequest)
			return
		}
		t.mu.Lock()
		failing, hold, arrived := t.failing, t.hold, t.arrived
		t.mu.Unlock()
		if failing {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		if hold != nil {
			select {
			case arrived <- struct{}{}:
			default:
			}
			select {
			case <-hold:
			case <-r.Context().Done(): // the seal's process was killed
				return
			}
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		if err != nil {
			return
		}
		info, _, err := cms.TSTInfoFor(body, big.NewInt(serial.Add(1)), asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 99999, 2}, time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		tok, err := cms.Sign(context.Background(), cms.SignOptions{Signer: key, Chain: []*x509.Certificate{cert},
			Content: info, Encapsulate: true, ContentType: cms.OIDTSTInfo})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp, err := cms.TimeStampResponse(tok)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/timestamp-reply")
		if _, err := w.Write(resp); err == nil {
			t.granted.Add(1)
		}
	}))
	t.url = t.srv.URL + "/tsr"
	return t, nil
}

func (t *tsa) close() { t.srv.Close() }

// holdRequests makes requests wait until the returned release is called; arrived receives
// when the first held request is there.
func (t *tsa) holdRequests() (arrived <-chan struct{}, release func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	hold, got := make(chan struct{}), make(chan struct{}, 1)
	t.hold, t.arrived = hold, got
	var once sync.Once
	return got, func() {
		once.Do(func() {
			t.mu.Lock()
			t.hold, t.arrived = nil, nil
			t.mu.Unlock()
			close(hold)
		})
	}
}

// fail makes every request fail with 503 until the returned restore is called.
func (t *tsa) fail() (restore func()) {
	t.mu.Lock()
	t.failing = true
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		t.failing = false
		t.mu.Unlock()
	}
}
