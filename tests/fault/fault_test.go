package fault

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/azure/queuestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify"
)

// waitLog waits until the host's output holds n lines containing every part.
func waitLog(t testing.TB, n int, parts ...string) {
	t.Helper()
	eventually(t, strings.Join(parts, " … "), func() bool { return countLog(parts...) >= n })
}

func countLog(parts ...string) int {
	n := 0
	for _, line := range strings.Split(svc.logs.String(), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// A seal message delivered twice seals once: one timestamp (one signing), the signed PDF
// written once, one session.completed, one e-mail of each kind.
func TestSealMessageDeliveredTwice(t *testing.T) {
	auth := initiator(t)
	s := create(t, auth)
	invited(t, s)
	before := svc.tsa.rs.Granted.Load()
	sign(t, s)                         // the callback queues the seal message
	sealMessage(t, esign.QueueSeal, s) // and the queue delivers it again
	complete(t, s)
	etag := signedProps(t, s).ETag
	waitLog(t, 1, "group "+s.GroupID+" is already complete; duplicate message acknowledged")
	if got := svc.tsa.rs.Granted.Load() - before; got != 1 {
		t.Errorf("%d timestamps for one session, want one seal", got)
	}
	if signedProps(t, s).ETag != etag {
		t.Error("the duplicate rewrote the signed PDF")
	}
	checkOnce(t, s, mails(t))
}

// A seal that keeps failing ends in the poison queue: seal.failed and one seal-failure e-mail,
// and a poison message delivered again sends no second one.
func TestPoisonSealMessage(t *testing.T) {
	auth := initiator(t)
	s := create(t, auth)
	invited(t, s)
	restore := svc.tsa.fail()
	defer restore()
	sign(t, s)
	failure := mailKey{s.CorrelationID, notify.KindSealFailure, s.Requester}
	eventually(t, "the seal-failure e-mail", func() bool { return mails(t)[failure] > 0 })
	restore()
	waitLog(t, 1, "seal-poison: group "+s.GroupID+": seal.failed recorded")
	sealMessage(t, esign.QueueSeal+"-poison", s)
	waitLog(t, 2, "seal-poison: group "+s.GroupID+": seal.failed recorded")
	waitLog(t, 1, "requester_seal_failure of session "+s.GroupID, "was already sent")

	m := mails(t)
	state, kinds := sessionState(t, s.GroupID)
	if m[failure] != 1 || kinds["notification.sent/"+string(notify.KindSealFailure)] != 1 {
		t.Errorf("%d seal-failure e-mails (%d recorded), want 1", m[failure], kinds["notification.sent/"+string(notify.KindSealFailure)])
	}
	if state != esign.SessionSealing || kinds[esign.EvSealFailed] != 2 || kinds[esign.EvSessionCompleted] != 0 {
		t.Errorf("after the poison messages: %s, events %v", state, kinds)
	}
	if m[mailKey{s.CorrelationID, notify.KindDocumentsReady, s.Requester}] != 0 {
		t.Error("documents-ready sent for a session that was not sealed")
	}
	if _, _, err := blobs(t).Open(context.Background(), "signed", signedPath(s)); err == nil {
		t.Error("a signed PDF was written by a seal that failed")
	}
}

// The processor killed in the middle of a seal (its timestamp request held) and started again:
// the message's retry seals the session once the dead attempt's lock has expired.
func TestProcessorKilledMidSeal(t *testing.T) {
	auth := initiator(t)
	s := create(t, auth)
	invited(t, s)
	arrived, release := svc.tsa.holdRequests()
	defer release()
	sign(t, s)
	select {
	case <-arrived:
	case <-time.After(deadline):
		t.Fatal("the seal did not reach the time-stamping authority")
	}
	if err := svc.host.RestartHandler(context.Background(), "processor"); err != nil {
		t.Fatal(err)
	}
	release()
	complete(t, s)
	checkOnce(t, s, mails(t))
}

// outageAnswer is how long a request during the storage outage may take to be answered.
const outageAnswer = 5 * time.Second

// Azurite stopped and started again while sessions are live: requests during the outage are
// answered with a 5xx problem within outageAnswer, none hangs the service; afterwards the same service (not restarted) finishes every
// session, with nothing lost or doubled.
func TestStorageRestartedUnderLiveSessions(t *testing.T) {
	ctx := context.Background()
	auth := initiator(t)
	a, b := create(t, auth), create(t, auth)
	invited(t, a, b)
	sign(t, a)
	complete(t, a)
	waitQueuesEmpty(t)

	svc.azurite.Stop()
	for _, req := range []struct{ method, path string }{
		{"GET", "esign/session/" + b.CorrelationID + "/status"},
		{"POST", "esign/session"},
	} {
		var body any
		if req.method == "POST" {
			_, body = newSession(t)
		}
		// outageAnswer is far below the client's 60 s: a request still open then hung.
		rctx, cancel := context.WithTimeout(ctx, outageAnswer)
		r, err := callCtx(rctx, req.method, req.path, body, auth)
		cancel()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			t.Errorf("%s %s during the outage: no answer within %s (the service hung): %v", req.method, req.path, outageAnswer, err)
		case err != nil:
			t.Errorf("%s %s during the outage: %v, want a 5xx problem answer", req.method, req.path, err)
		case r.Status < 500 || r.Status > 599 || !strings.HasPrefix(r.Type, "application/problem+json") || r.str("code") == "":
			t.Errorf("%s %s during the outage: %d %s %s, want a 5xx application/problem+json with a code", req.method, req.path, r.Status, r.Type, r.Raw)
		}
	}
	if err := svc.azurite.Restart(ctx); err != nil {
		t.Fatal(err)
	}

	must(t, http.StatusOK, "GET", "esign/session/"+a.CorrelationID+"/status", nil, auth)
	c := create(t, auth)
	invited(t, c)
	sign(t, b)
	sign(t, c)
	complete(t, b)
	complete(t, c)
	m := mails(t)
	for _, s := range []session{a, b, c} {
		checkOnce(t, s, m)
	}
}

// waitQueuesEmpty waits until the processor's queues hold no message (none is in flight).
func waitQueuesEmpty(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	eventually(t, "the queues to drain", func() bool {
		for _, name := range []string{esign.QueueNotifications, esign.QueueSeal, "portalpurge"} {
			q, err := queuestore.New(account(t), name)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := q.Count(ctx); err != nil || n > 0 {
				return false
			}
		}
		return true
	})
}

// Two processor instances on the same queues (Functions scale-out) over many sessions: every
// invitation, seal and notice exactly once in effect.
func TestTwoProcessorsManySessions(t *testing.T) {
	n := 200
	if v, err := strconv.Atoi(os.Getenv("FAULT_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	secondProcessor(t)
	auth := initiator(t)
	before := svc.tsa.rs.Granted.Load()
	sessions := make([]session, n)
	parallel(t, n, func(i int) { sessions[i] = create(t, auth) })
	invited(t, sessions...)
	parallel(t, n, func(i int) { sign(t, sessions[i]) })
	eventually(t, "every session sealed and announced", func() bool {
		m := mails(t)
		for _, s := range sessions {
			// the documents-ready notice and the signer's completion e-mail are two messages:
			// either may land first
			if m[mailKey{s.CorrelationID, notify.KindDocumentsReady, s.Requester}] == 0 ||
				m[mailKey{s.CorrelationID, notify.KindSignerCompleted, s.Signer}] == 0 {
				return false
			}
		}
		return true
	})
	m := mails(t)
	for _, s := range sessions {
		checkOnce(t, s, m)
	}
	if got := svc.tsa.rs.Granted.Load() - before; got != int64(n) {
		t.Errorf("%d timestamps for %d sessions, want one seal each", got, n)
	}
	for _, fn := range []string{"[fn=Seal ", "[fn=Notify "} {
		if countLog("[second]", fn, "Executed (Succeeded") == 0 {
			t.Errorf("the second processor ran no %s invocation: the test did not exercise two instances", strings.Trim(fn, "[ "))
		}
	}
}

// parallel runs do(0..n-1) on eight workers and fails the test when one of them failed.
func parallel(t *testing.T, n int, do func(i int)) {
	t.Helper()
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				do(i)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}
