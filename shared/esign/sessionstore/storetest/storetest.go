// Package storetest gives a test the real signing-session store (sessionstore) on the test
// package's Azurite (the package's TestMain calls azuritetest.Main), in fresh tables of the test's
// own: the one set-up that sessionstore's own tests and other packages' tests share.
package storetest

import (
	"testing"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
)

// New makes and ensures a session store in fresh tables on the package's Azurite.
func New(t testing.TB) *sessionstore.Store {
	t.Helper()
	s, _ := NewRaw(t)
	return s
}

// NewRaw is New and the store's sessions table, raw: for the tests that read or break rows
// directly (a corrupt manifest, a bad event).
func NewRaw(t testing.TB) (*sessionstore.Store, *tablestore.Store) {
	t.Helper()
	sfx := azuritetest.Name("")
	acct := azuritetest.Account(t)
	s, err := sessionstore.New(acct, "sess"+sfx, "idx"+sfx)
	s = azuritetest.Ensured(t, s, err)
	raw, err := tablestore.New(acct, "sess"+sfx)
	if err != nil {
		t.Fatal(err)
	}
	return s, raw
}
