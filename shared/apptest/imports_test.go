package apptest

import "testing"

func TestIsStoreNamesTheStores(t *testing.T) {
	for p, want := range map[string]bool{
		module + "shared/delivery/deliverystore":   true,
		module + "shared/document/documentstore":   true,
		module + "shared/esign/sessionstore":       true,
		module + "shared/dispatch/batchstore":      true,
		module + "shared/workflow/workflowstore":   true,
		module + "shared/kernel/aggstore":          true,
		module + "shared/azure/tablestore":         true,
		module + "shared/azure/blobstore":          false,
		module + "shared/azure/queuestore":         false,
		module + "shared/delivery":                 false,
		module + "shared/delivery/deliverystore/x": false,
		"example.com/other/somestore":              false,
	} {
		if got := IsStore(p); got != want {
			t.Errorf("IsStore(%s) = %t, want %t", p, got, want)
		}
	}
}

// StoreImports sees the stores of the packages it lists: shared/apptest itself imports the
// stores' fixtures, not the stores, and the fixtures import the stores.
func TestStoreImportsFindsAStore(t *testing.T) {
	found, wiring := StoreImports(t, ".", "none", "./...")
	if wiring != 0 || len(found) == 0 {
		t.Fatalf("found %q, wiring %d; want apptest's store imports", found, wiring)
	}
	found, wiring = StoreImports(t, ".", module+"shared/apptest", "./...")
	if wiring == 0 || len(found) != 0 {
		t.Fatalf("found %q, wiring %d; want every store import counted as the wiring's", found, wiring)
	}
}
