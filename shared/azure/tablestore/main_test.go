package tablestore

import (
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

func newAccount(t testing.TB) *azconn.Account {
	t.Helper()
	a, err := azconn.New(azconn.Config{ConnectionString: azuritetest.Shared(t).ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
