// Package storetest gives a test the real notification outbox on the test package's Azurite (the
// package's TestMain calls azuritetest.Main), in fresh tables of the test's own: the one set-up
// that outbox's own tests and other packages' tests share.
package storetest

import (
	"testing"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/notify/outbox"
)

// New makes and ensures an outbox in fresh tables on the package's Azurite.
func New(t testing.TB) *outbox.Outbox {
	t.Helper()
	o, err := outbox.New(azuritetest.Account(t), azuritetest.Name("outbox"))
	return azuritetest.Ensured(t, o, err)
}
