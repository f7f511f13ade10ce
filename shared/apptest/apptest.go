// Package apptest is the one test environment that the packages of both apps build their tests
// on: the package's Azurite account, a settable clock, a token key ring and a personal-data
// cipher with fresh random keys, the blob store, and each aggregate's store in fresh tables of
// the test's own (made on first use, through the store's storetest fixture). A test package's
// own set-up is then only what it tests: the handler or job it builds from these. The sample
// template package (Package, PackageZip) and a queue invocation in the host's shape (Invoke)
// are here too, for the jobs' tests, with Serve for a timer's or a raw invocation, and the test
// seal certificate (SealKey, SelfSigned) and random ids and keys (Hex, Key).
//
// A package that calls New must call azuritetest.Main in its TestMain.
package apptest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	deliverystoretest "github.com/esign-svc/esign/shared/delivery/deliverystore/storetest"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
	batchstoretest "github.com/esign-svc/esign/shared/dispatch/batchstore/storetest"
	"github.com/esign-svc/esign/shared/document/documentstore"
	documentstoretest "github.com/esign-svc/esign/shared/document/documentstore/storetest"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	sessionstoretest "github.com/esign-svc/esign/shared/esign/sessionstore/storetest"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
	outboxtest "github.com/esign-svc/esign/shared/notify/outbox/storetest"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/workflow/workflowstore"
	workflowstoretest "github.com/esign-svc/esign/shared/workflow/workflowstore/storetest"
)

// Clock is a test's time: it stands still until the test moves it. Safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// Key is a fresh random 32-byte key, base64: the value of one key-ring entry.
func Key() string {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return base64.StdEncoding.EncodeToString(k)
}

// Hex is n random bytes as lower-case hex: an identifier of the test's own (a group, session
// or correlation id).
func Hex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Env is one test's environment. The stores are made on first use, each in fresh tables.
type Env struct {
	tb      testing.TB
	Account *azconn.Account
	Blobs   *blobstore.Store
	// Clock starts at the test's start, whole seconds, UTC.
	Clock *Clock
	// Ring is a key ring of one fresh key "k1"; Tokens a codec on it and the clock.
	Ring   *tokens.KeyRing
	Tokens *tokens.Codec
	// Cipher is a personal-data cipher of one fresh key "e1"; Hasher keys e-mail hashes with
	// a fresh key.
	Cipher *pii.Cipher
	Hasher *pii.Hasher

	sessions   *sessionstore.Store
	sessionRaw *tablestore.Store
	deliveries *deliverystore.Store
	batches    *batchstore.Store
	documents  *documentstore.Store
	workflows  *workflowstore.Store
	outbox     *outbox.Outbox
}

// New is a fresh environment on the package's Azurite.
func New(tb testing.TB) *Env {
	tb.Helper()
	ring, err := tokens.ParseKeyRing("k1:" + Key())
	if err != nil {
		tb.Fatal(err)
	}
	cipher, err := pii.ParseCipher("e1:" + Key())
	if err != nil {
		tb.Fatal(err)
	}
	hk := make([]byte, 32)
	_, _ = rand.Read(hk)
	hasher, err := pii.NewHasher(hk)
	if err != nil {
		tb.Fatal(err)
	}
	acct := azuritetest.Account(tb)
	e := &Env{tb: tb, Account: acct, Blobs: blobstore.New(acct), Clock: NewClock(time.Now().UTC().Truncate(time.Second)),
		Ring: ring, Cipher: cipher, Hasher: hasher}
	e.Tokens = tokens.NewCodec(ring, tokens.WithClock(e.Clock.Now))
	return e
}

// Now is the environment clock's time (a func() time.Time for the apps' Now fields).
func (e *Env) Now() time.Time { return e.Clock.Now() }

// Container is a fresh blob container of the test's own, created, named prefix and random hex.
func (e *Env) Container(prefix string) string {
	e.tb.Helper()
	name := azuritetest.Name(prefix)
	if err := e.Blobs.EnsureContainer(context.Background(), name); err != nil {
		e.tb.Fatal(err)
	}
	return name
}

// Containers creates the named containers (the apps' own names, such as "documents"), which
// tests of one package share.
func (e *Env) Containers(names ...string) {
	e.tb.Helper()
	for _, n := range names {
		if err := e.Blobs.EnsureContainer(context.Background(), n); err != nil {
			e.tb.Fatal(err)
		}
	}
}

// Sessions is the test's signing-session store.
func (e *Env) Sessions() *sessionstore.Store {
	if e.sessions == nil {
		e.sessions, e.sessionRaw = sessionstoretest.NewRaw(e.tb)
	}
	return e.sessions
}

// SessionTable is the session store's sessions table, raw: for the tests that read or break
// rows directly.
func (e *Env) SessionTable() *tablestore.Store {
	e.Sessions()
	return e.sessionRaw
}

// Deliveries is the test's delivery store.
func (e *Env) Deliveries() *deliverystore.Store {
	if e.deliveries == nil {
		e.deliveries = deliverystoretest.New(e.tb)
	}
	return e.deliveries
}

// Batches is the test's batch store.
func (e *Env) Batches() *batchstore.Store {
	if e.batches == nil {
		e.batches = batchstoretest.New(e.tb)
	}
	return e.batches
}

// Documents is the test's render-document store.
func (e *Env) Documents() *documentstore.Store {
	if e.documents == nil {
		e.documents = documentstoretest.New(e.tb)
	}
	return e.documents
}

// Workflows is the test's workflow store.
func (e *Env) Workflows() *workflowstore.Store {
	if e.workflows == nil {
		e.workflows, _, _ = workflowstoretest.New(e.tb)
	}
	return e.workflows
}

// Outbox is the test's e-mail outbox.
func (e *Env) Outbox() *outbox.Outbox {
	if e.outbox == nil {
		e.outbox = outboxtest.New(e.tb)
	}
	return e.outbox
}

// Flaky is an e-mail sender for the jobs' tests: it sends through To, or answers a retryable
// failure (the provider is down) while Down is set.
type Flaky struct {
	To   notify.Sender
	Down atomic.Bool
}

// Send sends m through To unless the provider is down.
func (f *Flaky) Send(ctx context.Context, m notify.Message) error {
	if f.Down.Load() {
		return apperr.New(apperr.KindUnavailable, "provider_down", "the provider is down")
	}
	return f.To.Send(ctx, m)
}
