// Package storetest gives a test the real delivery-session store (deliverystore) on the test
// package's Azurite (the package's TestMain calls azuritetest.Main), in fresh tables of the test's
// own: the one set-up that deliverystore's own tests and other packages' tests share.
package storetest

import (
	"testing"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
)

// New makes and ensures a delivery store in fresh tables on the package's Azurite.
func New(t testing.TB) *deliverystore.Store {
	t.Helper()
	sfx := azuritetest.Name("")
	s, err := deliverystore.New(azuritetest.Account(t), "dlv"+sfx, "dlvidx"+sfx)
	return azuritetest.Ensured(t, s, err)
}
