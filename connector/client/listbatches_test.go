package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestListBatchesReadsEveryPage: the list is paged (issue 26); ListBatches follows the
// continuationToken, keeping the state filter, until a page comes without one.
func TestListBatchesReadsEveryPage(t *testing.T) {
	t.Parallel()
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Query().Get("continuationToken") {
		case "":
			fmt.Fprint(w, `{"total":3,"batches":[{"batchId":"b3"},{"batchId":"b2"}],"continuationToken":"p2"}`)
		case "p2":
			fmt.Fprint(w, `{"total":3,"batches":[{"batchId":"b1"}]}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	c := New(srv.URL+"/api", "k", StaticToken("t"))
	total, list, err := c.ListBatches(context.Background(), "completed")
	if err != nil {
		t.Fatal(err)
	}
	if total != 3 || len(list) != 3 || list[0].BatchID != "b3" || list[2].BatchID != "b1" {
		t.Fatalf("total %d, batches %+v", total, list)
	}
	if len(queries) != 2 || queries[1] != "code=k&continuationToken=p2&state=completed" {
		t.Fatalf("queries %q", queries)
	}
}
