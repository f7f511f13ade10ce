package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestCreateWorkflowBody: a create without a correlationId sends none (the service generates
// one) and, each such create being a new workflow, is sent once even on a 503; one with a
// correlationId is idempotent and sent again; options go as the body's options.
func TestCreateWorkflowBody(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"status":503,"code":"unavailable"}`))
	}))
	defer srv.Close()
	c := New(srv.URL+"/api", "k", StaticToken("t"))
	c.Retries, c.Backoff = 2, time.Millisecond
	ctx := context.Background()
	if _, err := c.CreateWorkflow(ctx, CreateWorkflowRequest{TemplatePath: "templates/shared/p/",
		Options: &WorkflowOptions{DocumentID: "PO-1", DocType: "po"}}); err == nil {
		t.Fatal("a 503 answered no error")
	}
	mu.Lock()
	if len(bodies) != 1 {
		t.Fatalf("a create without correlationId was sent %d times", len(bodies))
	}
	if _, ok := bodies[0]["correlationId"]; ok {
		t.Fatalf("body %v carries a correlationId", bodies[0])
	}
	if o, _ := bodies[0]["options"].(map[string]any); o["documentId"] != "PO-1" || o["docType"] != "po" {
		t.Fatalf("options %v", bodies[0]["options"])
	}
	bodies = nil
	mu.Unlock()
	c.CreateWorkflow(ctx, CreateWorkflowRequest{TemplatePath: "templates/shared/p/", CorrelationID: "c-1"})
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 3 || bodies[0]["correlationId"] != "c-1" {
		t.Fatalf("a create with a correlationId: %d sends %v", len(bodies), bodies)
	}
	if _, ok := bodies[0]["options"]; ok {
		t.Fatalf("body %v carries options", bodies[0])
	}
}
