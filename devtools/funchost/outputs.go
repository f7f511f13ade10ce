package funchost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/esign-svc/esign/shared/azure/queuestore"
)

// writeOutputs enqueues the function's queue outputs present in Outputs: one JSON object, a
// string, or an array of those (one message each). Each message's JSON text is base64-encoded
// when the app's messageEncoding is base64 (the default). Outputs the function does not declare
// are ignored, as the real host does. Each message written wakes the app's listener of that
// queue (queueWatcher). A message Options.DropOutput picks is not written.
// Errors: an output that is not valid JSON, or storage refusing the enqueue (messages before the
// failing one stay enqueued, as with the real host).
func (h *Host) writeOutputs(ctx context.Context, f *function, outputs map[string]json.RawMessage) error {
	for _, o := range f.outputs {
		raw, ok := lookupOutput(outputs, o.name)
		if !ok {
			continue
		}
		msgs, err := splitMessages(raw)
		if err != nil {
			return fmt.Errorf("output %s: %w", o.name, err)
		}
		if len(msgs) == 0 {
			continue
		}
		c, err := h.queues.get(ctx, o.conn, o.queue)
		if err != nil {
			return fmt.Errorf("output %s: %w", o.name, err)
		}
		for _, m := range msgs {
			if h.opts.DropOutput != nil && h.opts.DropOutput(f.name, o.name, m) {
				h.log.printf("[fn=%s] output %s: one message dropped by the DropOutput test hook", f.name, o.name)
				continue
			}
			text := string(m)
			if f.app.queues.Base64 {
				text = queuestore.EncodeRaw(m)
			}
			if _, err := c.EnqueueMessage(ctx, text, nil); err != nil {
				return fmt.Errorf("output %s: enqueue to %s: %w", o.name, o.queue, err)
			}
			h.watcher.notify(f.app, o.conn, o.queue)
		}
	}
	return nil
}

// lookupOutput finds an output by binding name; names are case-insensitive in the real host.
func lookupOutput(outputs map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	if v, ok := outputs[name]; ok {
		return v, true
	}
	for k, v := range outputs {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// splitMessages turns an output value into message bodies: null gives none, an array gives one
// per element, a JSON string gives its text, anything else its compact JSON text.
func splitMessages(raw json.RawMessage) ([][]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		var out [][]byte
		for _, it := range items {
			m, err := oneMessage(it)
			if err != nil {
				return nil, err
			}
			if m != nil {
				out = append(out, m)
			}
		}
		return out, nil
	}
	m, err := oneMessage(raw)
	if err != nil || m == nil {
		return nil, err
	}
	return [][]byte{m}, nil
}

func oneMessage(raw json.RawMessage) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, nil
	}
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []byte(s), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
