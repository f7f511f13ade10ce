package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/devtools/funchost"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// storageCounter is a reverse proxy in front of Azurite's three endpoints that the apps reach
// through STORAGE_CONNECTION_STRING and the local host through AzureWebJobsStorage. It counts
// the requests each sends (by the application id azconn, or funchost, puts in the User-Agent:
// "esign-dispatcher", "esign-processor", "funchost"; anything else is "other"), so a test can
// hold a route to its number of storage calls and a benchmark report its calls per record.
type storageCounter struct {
	mu    sync.Mutex
	calls map[string][]string // app -> "METHOD service path"
	srvs  []*http.Server
	urls  [3]string
}

func startStorageCounter(ctx context.Context, az *azuritetest.Instance) (*storageCounter, error) {
	c := &storageCounter{calls: map[string][]string{}}
	for i, target := range []string{az.BlobEndpoint, az.QueueEndpoint, az.TableEndpoint} {
		u, err := url.Parse(target)
		if err != nil {
			return nil, err
		}
		service := [...]string{"blob", "queue", "table"}[i]
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
		proxy.Transport = &http.Transport{MaxIdleConnsPerHost: 64}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c.record(r, service)
			proxy.ServeHTTP(w, r)
		})}
		go func() { _ = srv.Serve(ln) }()
		c.srvs = append(c.srvs, srv)
		c.urls[i] = "http://" + ln.Addr().String() + u.Path
	}
	go func() { <-ctx.Done(); c.close() }()
	return c, nil
}

func (c *storageCounter) record(r *http.Request, service string) {
	ua := r.Header.Get("User-Agent")
	app := "other"
	for _, a := range []string{"esign-dispatcher", "esign-processor", funchost.UserAgent} {
		if strings.HasPrefix(ua, a) {
			app = a
		}
	}
	path := r.URL.Path
	if i := strings.Index(path, "("); i > 0 { // table entity keys: keep the table name
		if strings.HasPrefix(path[i:], "()") && r.Method == http.MethodGet {
			path = path[:i] + " query" // a query, not a point read
		} else {
			path = path[:i]
		}
	}
	c.mu.Lock()
	c.calls[app] = append(c.calls[app], r.Method+" "+service+" "+path)
	c.mu.Unlock()
}

// connectionString is the development connection string through the proxy.
func (c *storageCounter) connectionString() string {
	return azuritetest.ConnectionString(c.urls[0], c.urls[1], c.urls[2])
}

// since returns the calls app made after mark (a count from mark).
func (c *storageCounter) mark(app string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls[app])
}

func (c *storageCounter) since(app string, mark int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls[app][mark:]...)
}

func (c *storageCounter) close() {
	for _, s := range c.srvs {
		_ = s.Close()
	}
}

// TestStorageCallsPerCreateAndCallback holds a create and a callback to the storage shape
// issue 9 sets, with the event outbox's entry of issue 27: a create in at most 6 storage calls
// (one of them the transaction, one the outbox schedule's upsert of session.created), a
// callback that does not complete the session in a point read, the outbox upsert (slot.signed)
// and one transaction, and the one that completes it in the same three (the seal message
// leaves through the output binding). It runs alone (not parallel): the dispatcher serves
// nothing else meanwhile.
func TestStorageCallsPerCreateAndCallback(t *testing.T) {
	const app = "esign-dispatcher"
	body := createBody(t, "parallel", 2)
	tok := bearer(svc.jwt(t, tenantA, "Esign.Initiator"))
	body["correlationId"] = "count-" + uuid.NewString()

	m := svc.counter.mark(app)
	created := call(t, "POST", svc.url("esign/session"), body, tok)
	if created.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Status, created.Raw)
	}
	calls := svc.counter.since(app, m)
	t.Logf("create: %d storage calls: %v", len(calls), calls)
	if len(calls) > 6 || batches(calls) != 1 || outboxEntries(calls) != 1 {
		t.Errorf("create made %d storage calls (%d transactions, %d outbox entries), want at most 6 with one transaction and one outbox entry: %v",
			len(calls), batches(calls), outboxEntries(calls), calls)
	}

	slots := slotsOf(t, created, "slots")
	var raws [][]byte
	for _, s := range slots {
		raw, err := json.Marshal(callbackBody(walk(t, s.Link)))
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
	}
	for i, raw := range raws {
		m := svc.counter.mark(app)
		r := postCallback(t, raw, callbacksig.Sign(callbackSecret(t), time.Now(), raw))
		if r.Status != http.StatusOK {
			t.Fatalf("callback %d: %d %s", i, r.Status, r.Raw)
		}
		calls := svc.counter.since(app, m)
		t.Logf("callback %d: %d storage calls: %v", i, len(calls), calls)
		if len(calls) != 3 || batches(calls) != 1 || outboxEntries(calls) != 1 || !strings.HasPrefix(calls[0], "GET table ") {
			t.Errorf("callback %d made %v, want a point read, the outbox entry and one transaction", i, calls)
		}
	}
}

// outboxEntries counts the upserts of the event outbox's schedule among calls.
func outboxEntries(calls []string) int {
	n := 0
	for _, c := range calls {
		if strings.HasPrefix(c, "PUT table ") && strings.HasSuffix(c, "/"+aggstore.TableOutbox) {
			n++
		}
	}
	return n
}

// batches counts the entity-group transactions among calls.
func batches(calls []string) int {
	n := 0
	for _, c := range calls {
		if strings.HasSuffix(c, "/$batch") {
			n++
		}
	}
	return n
}
