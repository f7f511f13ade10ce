// Package storetest gives a test the real batch store (batchstore) on the test package's Azurite
// (the package's TestMain calls azuritetest.Main), in fresh tables of the test's own: the one
// set-up that batchstore's own tests and other packages' tests share.
package storetest

import (
	"testing"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
)

// New makes and ensures a batch store in fresh tables on the package's Azurite.
func New(t testing.TB) *batchstore.Store {
	t.Helper()
	sfx := azuritetest.Name("")
	s, err := batchstore.New(azuritetest.Account(t), "dsp"+sfx, "dspidx"+sfx)
	return azuritetest.Ensured(t, s, err)
}
