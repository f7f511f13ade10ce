package azconn_test

import (
	"testing"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
)

// azuriteKey is Azurite's development account key.
const azuriteKey = azuritetest.AccountKey

func devConnString(t testing.TB) string {
	t.Helper()
	return azuritetest.Shared(t).ConnectionString()
}
