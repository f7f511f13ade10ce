// Package storetest gives a test the real document store (documentstore) on the test package's
// Azurite (the package's TestMain calls azuritetest.Main), in fresh tables of the test's own: the
// one set-up that documentstore's own tests and other packages' tests share.
package storetest

import (
	"testing"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/document/documentstore"
)

// New makes and ensures a document store in fresh tables on the package's Azurite.
func New(t testing.TB) *documentstore.Store {
	t.Helper()
	s, err := documentstore.New(azuritetest.Account(t), azuritetest.Name("docs"))
	return azuritetest.Ensured(t, s, err)
}
