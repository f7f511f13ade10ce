package sessionstore

import "github.com/esign-svc/esign/shared/azure/tablestore"

// For the tests in package sessionstore_test (which get their store from storetest): the
// sessions table and its row keys, so that they can read and break rows directly.
const (
	RowSession  = rowSession
	PrefixEvent = prefixEvent
)

// Table is the store's sessions table.
func (s *Store) Table() *tablestore.Store { return s.t }
