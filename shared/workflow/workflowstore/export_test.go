package workflowstore

import "github.com/esign-svc/esign/shared/azure/tablestore"

// For the tests in package workflowstore_test (which get their store from storetest): the
// workflows table and its workflow row's key, so that they can read rows directly.
const RowWorkflow = rowWorkflow

// Rows is the store's workflows table.
func (s *Store) Rows() *tablestore.Store { return s.tab.Rows() }
