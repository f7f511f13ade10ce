package apptest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/esign"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

func TestClockMovesOnlyWhenTold(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	c := NewClock(at)
	if !c.Now().Equal(at) {
		t.Fatalf("Now = %v", c.Now())
	}
	c.Add(90 * time.Minute)
	if want := at.Add(90 * time.Minute); !c.Now().Equal(want) {
		t.Fatalf("after Add: %v, want %v", c.Now(), want)
	}
	c.Set(at)
	if !c.Now().Equal(at) {
		t.Fatalf("after Set: %v", c.Now())
	}
}

func TestHexIsFreshHexOfTheLength(t *testing.T) {
	a, b := Hex(16), Hex(16)
	if len(a) != 32 || strings.Trim(a, "0123456789abcdef") != "" {
		t.Fatalf("Hex(16) = %q", a)
	}
	if a == b {
		t.Fatalf("two calls gave %q", a)
	}
}

// Each environment has keys of its own: what one encrypts the other cannot read.
func TestEnvKeysAreTheTestsOwn(t *testing.T) {
	a, b := New(t), New(t)
	ct, err := a.Cipher.EncryptString("signer@example.test", []byte("aad"))
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := a.Cipher.DecryptString(ct, []byte("aad")); err != nil || pt != "signer@example.test" {
		t.Fatalf("own cipher: %q, %v", pt, err)
	}
	if _, err := b.Cipher.DecryptString(ct, []byte("aad")); err == nil {
		t.Fatal("another environment's cipher read the ciphertext")
	}
}

// Two environments never see each other's aggregates: each store lies in fresh tables.
func TestEnvStoresAreTheTestsOwn(t *testing.T) {
	a, b := New(t), New(t)
	ctx := context.Background()
	if a.Sessions() != a.Sessions() {
		t.Fatal("Sessions is made once per environment")
	}
	if _, err := b.Sessions().GroupByCorrelation(ctx, "t1", "C-1"); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("fresh store: err = %v, want not found", err)
	}
	name := a.Container("apptest")
	if !strings.HasPrefix(name, "apptest") {
		t.Fatalf("container %q", name)
	}
	if _, err := a.Blobs.Put(ctx, name, "x.txt", strings.NewReader("x"), "text/plain", nil); err != nil {
		t.Fatal(err)
	}
}

// SessionTable is the Sessions store's own table: a row the store writes is there.
func TestSessionTableIsTheStoresTable(t *testing.T) {
	e := New(t)
	ctx := context.Background()
	now := e.Now()
	s := &esign.Session{GroupID: Hex(16), TenantID: "t1", CorrelationID: "C-1", DocumentID: "D", DocType: "t",
		PDFBlobPath: "documents/a.pdf", PDFHash: "sha256:00", SigningMode: esign.ModeParallel, State: esign.SessionPending,
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	slots := []esign.Slot{{Index: 0, SessionID: Hex(16), Role: "r", EmailHash: "h", Condition: esign.Required, OTPChannel: esign.OTPNone}}
	if err := e.Sessions().Create(ctx, s, slots, esign.Start(s, slots, now), now); err != nil {
		t.Fatal(err)
	}
	rows, err := e.SessionTable().Query(ctx, s.GroupID, nil)
	if err != nil || len(rows) == 0 {
		t.Fatalf("raw rows of the session: %d, %v", len(rows), err)
	}
}
