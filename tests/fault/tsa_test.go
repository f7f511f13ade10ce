package fault

import (
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/esign-svc/esign/shared/pdf/tsatest"
)

// tsa is an RFC 3161 time-stamping authority (SEAL_TSA_URL) the tests steer: it answers at once,
// holds each request until released (a seal held in its middle), or fails (a seal that keeps
// failing until its message is poisoned). It counts the requests it granted: one per seal.
type tsa struct {
	url string
	srv *httptest.Server
	rs  *tsatest.Responder // counts the granted requests

	mu      sync.Mutex
	failing bool
	hold    chan struct{} // non-nil: requests wait for it to close
	arrived chan struct{} // a held request arrived
}

func startTSA() (*tsa, error) {
	rs, err := tsatest.NewResponder("fault test TSA")
	if err != nil {
		return nil, err
	}
	t := &tsa{rs: rs}
	t.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		rs.ServeHTTP(w, r)
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
