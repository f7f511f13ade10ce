package licenceusage

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/licensing"
)

// service is an httptest licensing service answering status to POST /v1/usage and keeping the
// ids it took.
type service struct {
	mu     sync.Mutex
	status int
	ids    []string
	auth   []string
	strict int // posts that were not exactly a Usage
}

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var u licensing.Usage
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	bad := dec.Decode(&u) != nil
	s.mu.Lock()
	defer s.mu.Unlock()
	if bad {
		s.strict++
	}
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	if s.status/100 == 2 && r.URL.Path == licensing.PathUsage {
		s.ids = append(s.ids, u.ID)
	}
	w.WriteHeader(s.status)
}

func newJob(t *testing.T, status int) (*Job, *service) {
	t.Helper()
	s := &service{status: status}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := licensing.New(srv.URL, "a.b.c", licensing.WithTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return &Job{Deps: Deps{Service: c}}, s
}

// invoke runs Handle as the host does (funcproto.QueueHandler) and returns the reply status:
// 200 acknowledges, anything else is retried and, after maxDequeueCount, poisoned.
func invoke(t *testing.T, j *Job, body string) int {
	t.Helper()
	return apptest.Invoke(t, j.Handle, []byte(body)).Status
}

func usage(t *testing.T) string {
	t.Helper()
	b, _ := json.Marshal(licensing.NewUsage(licensing.KindSessionSealed, "tid", time.Now(), "g-1"))
	return string(b)
}

// A record the service takes is acknowledged, posted once with the licence as bearer.
func TestRecordedIsAcknowledged(t *testing.T) {
	t.Parallel()
	j, s := newJob(t, http.StatusAccepted)
	if code := invoke(t, j, usage(t)); code != http.StatusOK {
		t.Fatalf("reply %d", code)
	}
	if len(s.ids) != 1 || s.ids[0] != "session.sealed:g-1" || s.auth[0] != "Bearer a.b.c" {
		t.Fatalf("service got %v %v", s.ids, s.auth)
	}
}

// The service down (5xx), refusing (4xx) or no service configured: the invocation fails, so
// the host retries and then keeps the record in licence-usage-poison; nothing is acknowledged.
func TestNotTakenIsRetried(t *testing.T) {
	t.Parallel()
	for _, status := range []int{500, 503, 429, 401} {
		j, _ := newJob(t, status)
		if code := invoke(t, j, usage(t)); code == http.StatusOK {
			t.Errorf("service %d: acknowledged", status)
		}
	}
	if code := invoke(t, &Job{Deps: Deps{}}, usage(t)); code == http.StatusOK {
		t.Error("no service configured: acknowledged (the record would be lost)")
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	c, _ := licensing.New(closed.URL, "a.b.c")
	if code := invoke(t, &Job{Deps: Deps{Service: c}}, usage(t)); code == http.StatusOK {
		t.Error("unreachable service: acknowledged")
	}
}

// A message that is no usage record is acknowledged without a call (it can never succeed).
func TestMalformedIsAcknowledged(t *testing.T) {
	t.Parallel()
	j, s := newJob(t, http.StatusOK)
	for _, body := range []string{`not json`, `{}`, `{"id":"x","tenantId":"t","kind":"session.opened","at":"2026-01-01T00:00:00Z"}`,
		`{"records":[]}`, `{"records":[{"id":"x","tenantId":"t","kind":"batch.record"}]}`,
		`{"id":"x","tenantId":"t","kind":"batch.record","at":"2026-01-01T00:00:00Z","records":[{"id":"y","tenantId":"t","kind":"batch.record","at":"2026-01-01T00:00:00Z"}]}`} {
		if code := invoke(t, j, body); code != http.StatusOK {
			t.Errorf("%s: reply %d", body, code)
		}
	}
	if len(s.auth) != 0 {
		t.Fatalf("a malformed record was sent: %v", s.auth)
	}
}

// group is a licence-usage message of a batch's records 0..n-1.
func group(n int) string {
	us := make([]licensing.Usage, n)
	for i := range us {
		us[i] = licensing.NewUsage(licensing.KindBatchRecord, "tid", time.Now(), "b1", strconv.Itoa(i))
	}
	b, _ := json.Marshal(licensing.GroupMessage(us))
	return string(b)
}

// A group message posts each of its records, one call each in the operator's one-record format
// (no other member), and is acknowledged once all were taken; a refusal midway fails the
// invocation, and the retry posts the group again (the service keeps each id once).
func TestGroupPostsEachRecord(t *testing.T) {
	t.Parallel()
	j, s := newJob(t, http.StatusCreated)
	if code := invoke(t, j, group(3)); code != http.StatusOK {
		t.Fatalf("reply %d", code)
	}
	if want := []string{"batch.record:b1:0", "batch.record:b1:1", "batch.record:b1:2"}; !slices.Equal(s.ids, want) || s.strict != 0 {
		t.Fatalf("service got %v (%d posts with other members)", s.ids, s.strict)
	}
	s.mu.Lock()
	s.status = http.StatusServiceUnavailable
	s.mu.Unlock()
	if code := invoke(t, j, group(2)); code == http.StatusOK {
		t.Fatal("a group the service did not take was acknowledged")
	}
}
