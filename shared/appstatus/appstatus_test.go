package appstatus

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

var tables atomic.Int64

// store is a Store on a table of the test's own.
func store(t *testing.T) *Store {
	t.Helper()
	acct := azuritetest.Account(t)
	s, err := New(acct, fmt.Sprintf("appstatus%d%d", time.Now().UnixNano()%1e9, tables.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOffListsWhatTheLastStartFound: a feature an app records off is listed with its reason
// until the app's next start records it on; a table no app has made yet lists nothing.
func TestOffListsWhatTheLastStartFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := store(t)
	if off, err := s.Off(ctx); err != nil || len(off) != 0 {
		t.Fatalf("before any start: %v, %v", off, err)
	}
	if err := s.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 23, 0, 0, 0, time.UTC)
	off := Notice{App: AppProcessor, Feature: FeatureWorkflowCallbacks, Reason: "WEBHOOK_SECRETS is not set", At: at}
	for _, n := range []Notice{off, {App: "other", Feature: "alpha", Reason: "A is not set", At: at},
		{App: "other", Feature: "zeta", At: at}} {
		if err := s.Record(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Off(ctx)
	if err != nil || len(got) != 2 || got[0].Feature != "alpha" || got[1] != off {
		t.Fatalf("off: %+v, %v", got, err)
	}
	off.Reason, off.At = "", at.Add(time.Hour) // the next start has the secret
	if err := s.Record(ctx, off); err != nil {
		t.Fatal(err)
	}
	if got, err = s.Off(ctx); err != nil || len(got) != 1 || got[0].Feature != "alpha" {
		t.Fatalf("after the feature is on: %+v, %v", got, err)
	}
}
