// Package storetest gives a test the real workflow store on the test package's Azurite
// (azuritetest: the package's TestMain calls azuritetest.Main), in tables of its own and with a
// fixed test cipher, so the jobs' tests share one set-up instead of each writing it out.
package storetest

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/workflow/workflowstore"
)

// New makes and ensures a workflow store in fresh tables. It returns the store, the account
// (for the test's other stores) and the random suffix of the tables' names (for names of the
// test's own).
func New(t testing.TB) (*workflowstore.Store, *azconn.Account, string) {
	t.Helper()
	acct := azuritetest.Account(t)
	c, err := pii.ParseCipher("e1:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32))))
	if err != nil {
		t.Fatal(err)
	}
	sfx := strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
	st, err := workflowstore.New(acct, "wf"+sfx, "wfidx"+sfx, c)
	return azuritetest.Ensured(t, st, err), acct, sfx
}
