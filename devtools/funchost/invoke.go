package funchost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// reply is a handler's invocation response.
type reply struct {
	Outputs     map[string]json.RawMessage `json:"Outputs"`
	Logs        []json.RawMessage          `json:"Logs"`
	ReturnValue json.RawMessage            `json:"ReturnValue"`
}

// invoke POSTs {"Data":…,"Metadata":…} to the function's handler, prints its Logs, and writes
// its queue outputs. It logs the start and the end (result and duration) of the invocation,
// never the bodies.
// Errors: the handler cannot be reached, replies non-2xx or non-JSON, or an output cannot be
// written; the invocation has then failed.
func (h *Host) invoke(ctx context.Context, f *function, id string, data, metadata map[string]any, reason string) (*reply, error) {
	start := time.Now()
	prefix := fmt.Sprintf("[fn=%s id=%s]", f.name, id)
	h.log.printf("%s Executing (%s)", prefix, reason)
	r, err := h.call(ctx, f, id, data, metadata, prefix)
	if err == nil {
		err = h.writeOutputs(ctx, f, r.Outputs)
	}
	d := time.Since(start).Round(time.Millisecond)
	if err != nil {
		h.log.printf("%s Executed (Failed, Duration=%s): %v", prefix, d, err)
		return nil, err
	}
	h.log.printf("%s Executed (Succeeded, Duration=%s)", prefix, d)
	return r, nil
}

func (h *Host) call(ctx context.Context, f *function, id string, data, metadata map[string]any, prefix string) (*reply, error) {
	proc := f.app.proc.Load()
	if proc == nil {
		return nil, fmt.Errorf("app %s has no running handler", f.app.name)
	}
	if exited, how := proc.exited(); exited {
		return nil, fmt.Errorf("app %s: handler has exited (%v)", f.app.name, how)
	}
	now := time.Now().UTC()
	meta := map[string]any{}
	for k, v := range metadata {
		meta[k] = v
	}
	meta["sys"] = map[string]any{"MethodName": f.name, "UtcNow": now.Format("2006-01-02T15:04:05.000Z"), "RandGuid": newGUID()}
	body, err := json.Marshal(map[string]any{"Data": data, "Metadata": meta})
	if err != nil {
		return nil, fmt.Errorf("encode invocation request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, f.app.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, proc.baseURL()+"/"+f.name, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Azure-Functions-InvocationId", id)
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("call handler: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read handler reply: %w", err)
	}
	var r reply
	jsonErr := json.Unmarshal(raw, &r)
	// the logs of a failed invocation are printed too, as the host does: they say why it failed
	for _, l := range r.Logs {
		var s string
		if json.Unmarshal(l, &s) != nil {
			s = string(l)
		}
		for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
			h.log.printf("%s %s", prefix, line)
		}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("handler replied %d", resp.StatusCode)
	}
	if jsonErr != nil {
		return nil, fmt.Errorf("handler reply is not JSON (%d bytes): %v", len(raw), jsonErr)
	}
	return &r, nil
}
