package e2e

import (
	"bytes"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"
)

// Concurrent creates of one thing through the whole service: exactly one wins, the others are
// told why, none is a 5xx (call fails the test on any), and storage holds one of each.

const racers = 30

// race sends n copies of one request at the same moment and returns the answers.
func race(t *testing.T, n int, send func() reply) []reply {
	t.Helper()
	out := make([]reply, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = send()
		}()
	}
	close(start)
	wg.Wait()
	return out
}

func sessionIDs(r reply) []string {
	var ids []string
	list, _ := r.JSON["sessions"].([]any)
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			id, _ := m["deliveryId"].(string)
			ids = append(ids, id)
		}
	}
	return ids
}

func TestConcurrentDeliveryCreatesOneKey(t *testing.T) {
	t.Parallel()
	body := deliveryBody(t, "secure-email", 3)
	corr := body["correlationId"].(string)
	headers := bearer(svc.jwt(t, tenantA, "Esign.Initiator"))
	headers["Idempotency-Key"] = uuid.NewString()
	answers := race(t, racers, func() reply { return call(t, "POST", svc.url("delivery"), body, headers) })

	var created *reply
	for i, r := range answers {
		switch {
		case r.Status == http.StatusCreated:
			if created != nil {
				t.Fatalf("two creates answered 201: %s and %s", created.Raw, r.Raw)
			}
			created = &answers[i]
		case r.Status == http.StatusConflict && r.code() == "request_in_progress":
		case r.Status == http.StatusOK && r.Header.Get("Idempotent-Replayed") == "true":
			// a request that came after the create finished: its stored answer (checked below)
		default:
			t.Errorf("answer %d: %d %s", i, r.Status, r.Raw)
		}
	}
	if created == nil {
		t.Fatal("no create answered 201")
	}
	ids := sessionIDs(*created)
	if len(ids) != 3 {
		t.Fatalf("201 names %d sessions: %s", len(ids), created.Raw)
	}
	for _, r := range answers {
		if r.Status == http.StatusOK && !bytes.Equal(r.Raw, created.Raw) {
			t.Fatalf("replay %s differs from the 201 %s", r.Raw, created.Raw)
		}
	}
	var listed []string
	for _, s := range deliverySessions(t, tenantA, corr) {
		listed = append(listed, s["deliveryId"].(string))
	}
	slices.Sort(listed)
	if want := slices.Sorted(slices.Values(ids)); !slices.Equal(listed, want) {
		t.Fatalf("listed %v, want one session per recipient %v", listed, want)
	}

	// After it: the same request answers the stored result; another body under the key is refused.
	again := call(t, "POST", svc.url("delivery"), body, headers)
	if again.Status != http.StatusOK || !bytes.Equal(again.Raw, created.Raw) {
		t.Fatalf("repeat: %d %s", again.Status, again.Raw)
	}
	other := deliveryBody(t, "secure-email", 1)
	other["correlationId"] = corr
	if r := call(t, "POST", svc.url("delivery"), other, headers); r.Status != http.StatusConflict || r.code() != "idempotency_key_reused" {
		t.Fatalf("another body under the key: %d %s", r.Status, r.Raw)
	}
}

func TestDeliveryCreateWithoutKeyIsItsOwnKey(t *testing.T) {
	t.Parallel()
	body := deliveryBody(t, "secure-email", 2)
	first := call(t, "POST", svc.url("delivery"), body, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
	if first.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", first.Status, first.Raw)
	}
	again := call(t, "POST", svc.url("delivery"), body, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
	if again.Status != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Raw, first.Raw) {
		t.Fatalf("the same request again: %d %s", again.Status, again.Raw)
	}
	if n := len(deliverySessions(t, tenantA, body["correlationId"].(string))); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
	headers := bearer(svc.jwt(t, tenantA, "Esign.Initiator"))
	headers["Idempotency-Key"] = "has space"
	if r := call(t, "POST", svc.url("delivery"), body, headers); r.Status != http.StatusBadRequest || !slices.Contains(r.fields(), "Idempotency-Key") {
		t.Fatalf("bad key: %d %s", r.Status, r.Raw)
	}
}

func TestConcurrentSessionCreatesOneCorrelation(t *testing.T) {
	t.Parallel()
	body := createBody(t, "parallel", 2)
	headers := bearer(svc.jwt(t, tenantA, "Esign.Initiator"))
	answers := race(t, racers, func() reply { return call(t, "POST", svc.url("esign/session"), body, headers) })
	created, exists := 0, 0
	var groupID string
	for i, r := range answers {
		switch {
		case r.Status == http.StatusCreated:
			created++
			groupID = r.str("groupId")
		case r.Status == http.StatusConflict && r.code() == "session_exists":
			exists++
		default:
			t.Errorf("answer %d: %d %s", i, r.Status, r.Raw)
		}
	}
	if created != 1 || exists != racers-1 {
		t.Fatalf("%d created, %d session_exists; want 1 and %d", created, exists, racers-1)
	}
	for _, r := range answers {
		if r.Status == http.StatusConflict && r.str("groupId") != groupID {
			t.Fatalf("a 409 names %q, the session is %q", r.str("groupId"), groupID)
		}
	}
	if s := status(t, tenantA, body["correlationId"].(string)); s.Status != http.StatusOK || s.str("groupId") != groupID {
		t.Fatalf("status: %d %s", s.Status, s.Raw)
	}
}
