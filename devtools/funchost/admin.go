package funchost

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// serveAdmin is the admin API, master key only (401 otherwise):
//   - POST /admin/functions/{name} with {"input":"..."} fires a non-HTTP function, as the
//     real host does: 202 at once, the invocation runs in the background. For a queue trigger
//     the input is the message text (not base64); for a timer it is ignored. 404 for an
//     unknown function, 400 for an HTTP function or a body that is not {"input": string}.
//   - GET /admin/host/status answers {"state":"Running"}.
func (h *Host) serveAdmin(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(r, "admin") {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	path := strings.Trim(r.URL.Path, "/")
	if strings.EqualFold(path, "admin/host/status") {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = io.WriteString(w, `{"state":"Running"}`)
		return
	}
	const fnPrefix = "admin/functions/"
	if len(path) <= len(fnPrefix) || !strings.EqualFold(path[:len(fnPrefix)], fnPrefix) {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	f, err := h.lookup(path[len(fnPrefix):])
	if err != nil {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Input *string `json:"input"`
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil && len(strings.TrimSpace(string(raw))) > 0 {
		err = json.Unmarshal(raw, &body)
	}
	if err != nil {
		http.Error(w, `body must be {"input":"<string>"}`, http.StatusBadRequest)
		return
	}
	input := ""
	if body.Input != nil {
		input = *body.Input
	}
	switch f.kind {
	case triggerHTTP:
		http.Error(w, fmt.Sprintf("function %s is HTTP-triggered: call its route", f.name), http.StatusBadRequest)
		return
	case triggerTimer:
		h.background(func(ctx context.Context) { _ = h.fireTimer(ctx, f, time.Time{}, false, "admin API") })
	case triggerQueue:
		h.background(func(ctx context.Context) { _ = h.invokeAdminQueue(ctx, f, input) })
	}
	w.WriteHeader(http.StatusAccepted)
}

// invokeAdminQueue runs a queue trigger on a message that is not in any queue (DequeueCount 1);
// a failure is only logged, since there is no message to retry.
func (h *Host) invokeAdminQueue(ctx context.Context, f *function, input string) error {
	now := time.Now().UTC()
	exp, next := now.Add(7*24*time.Hour), now
	id, pop := newGUID(), newGUID()
	one := int64(1)
	m := &azqueue.DequeuedMessage{MessageID: &id, PopReceipt: &pop, DequeueCount: &one, InsertionTime: &now,
		ExpirationTime: &exp, TimeNextVisible: &next, MessageText: &input}
	data, meta := h.queueRequestData(f, m, input, 1)
	_, err := h.invoke(ctx, f, newGUID(), data, meta, "admin API")
	return err
}

func (h *Host) background(fn func(context.Context)) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		fn(context.WithoutCancel(h.ctx))
	}()
}
