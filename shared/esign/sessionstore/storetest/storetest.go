// Package storetest gives a test the real signing-session store (sessionstore) on the test
// package's Azurite (the package's TestMain calls azuritetest.Main), in fresh tables of the test's
// own: the one set-up that sessionstore's own tests and other packages' tests share.
package storetest

import (
	"testing"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
)

// New makes and ensures a session store in fresh tables on the package's Azurite.
func New(t testing.TB) *sessionstore.Store {
	t.Helper()
	sfx := azuritetest.Name("")
	s, err := sessionstore.New(azuritetest.Account(t), "sess"+sfx, "idx"+sfx)
	return azuritetest.Ensured(t, s, err)
}
