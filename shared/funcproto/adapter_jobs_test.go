package funcproto

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

func postInvocation(t *testing.T, h http.Handler, payload []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/Seal", bytes.NewReader(payload))
	req.Header.Set(InvocationIDHeader, "inv-q")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("reply Content-Type %q, want JSON", ct)
	}
	return rec
}

func TestQueueHandlerReplies(t *testing.T) {
	t.Parallel()
	errTransient := errors.New("table storage timed out")
	tests := []struct {
		name        string
		fn          func(ctx context.Context, m QueueMessage) error
		wantStatus  int
		wantOutputs bool
		wantLog     string
	}{
		{"success with outputs", func(ctx context.Context, m QueueMessage) error {
			Logf(ctx, "sealing (attempt %d)", m.DequeueCount)
			if err := AddOutput(ctx, "notify", map[string]string{"kind": "sealed"}); err != nil {
				return err
			}
			return AddOutput(ctx, "notify", map[string]string{"kind": "audit"})
		}, 200, true, "sealing (attempt 1)"},
		{"retryable error", func(ctx context.Context, m QueueMessage) error {
			_ = AddOutput(ctx, "notify", map[string]string{"kind": "sealed"})
			return errTransient
		}, 500, false, "to be retried: table storage timed out"},
		{"retryable apperr logs its code", func(ctx context.Context, m QueueMessage) error {
			return apperr.New(apperr.KindUnavailable, "storage_unavailable", "storage is down")
		}, 500, false, "to be retried: storage_unavailable"},
		{"permanent error acknowledged", func(ctx context.Context, m QueueMessage) error {
			_ = AddOutput(ctx, "notify", map[string]string{"kind": "sealed"})
			return Permanent(apperr.New(apperr.KindNotFound, "session_not_found", "no such session"))
		}, 200, false, "permanent failure, acknowledged without outputs: session_not_found"},
		{"undecodable message is permanent", func(ctx context.Context, m QueueMessage) error {
			var v struct{ GroupID int }
			return m.Decode(&v) // groupId is a string: can never succeed
		}, 200, false, "invalid_message"},
		{"panic is retried", func(ctx context.Context, m QueueMessage) error {
			panic("boom")
		}, 500, false, "handler panicked: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := postInvocation(t, QueueHandler(tt.fn), readTestdata(t, "queue_observed.json"))
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.wantStatus, rec.Body.String())
			}
			reply, _ := decodeReply(t, rec)
			if tt.wantOutputs {
				if got := string(reply.Outputs["notify"]); got != `[{"kind":"sealed"},{"kind":"audit"}]` {
					t.Fatalf("notify output %s", got)
				}
			} else if len(reply.Outputs) != 0 {
				t.Fatalf("outputs %v, want none", reply.Outputs)
			}
			if !strings.Contains(strings.Join(reply.Logs, "\n"), tt.wantLog) {
				t.Fatalf("logs %q, want %q", reply.Logs, tt.wantLog)
			}
		})
	}
}

func TestQueueHandlerSeesMessage(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"queue_documented.json", "queue_observed.json"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			var got QueueMessage
			var id string
			rec := postInvocation(t, QueueHandler(func(ctx context.Context, m QueueMessage) error {
				got, id = m, InvocationID(ctx)
				return nil
			}), readTestdata(t, file))
			if rec.Code != 200 || string(got.Body) != `{"groupId":"g1","attempt":1}` || got.DequeueCount != 1 || id != "inv-q" {
				t.Fatalf("status %d message %+v id %q", rec.Code, got, id)
			}
		})
	}
}

func TestQueueHandlerBadInvocation(t *testing.T) {
	t.Parallel()
	called := false
	h := QueueHandler(func(ctx context.Context, m QueueMessage) error { called = true; return nil })
	for _, payload := range []string{`nope`, `{"Data":{"msg":"{}"},"Metadata":{"DequeueCount":"x"}}`, `{"Data":{"a":"1","b":"2"}}`} {
		rec := postInvocation(t, h, []byte(payload))
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400 (retried, then poisoned)", payload, rec.Code)
		}
		if reply, _ := decodeReply(t, rec); len(reply.Logs) == 0 || !strings.Contains(reply.Logs[0], "invalid_invocation") {
			t.Errorf("%s: logs %q", payload, reply.Logs)
		}
	}
	if called {
		t.Fatal("handler called for an undecodable invocation")
	}
}

func TestTimerHandler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		err        error
		wantStatus int
	}{
		{"ok", nil, 200},
		{"permanent", Permanent(errors.New("misconfigured")), 200},
		{"failed", errors.New("storage down"), 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var info TimerInfo
			rec := postInvocation(t, TimerHandler(func(ctx context.Context, ti TimerInfo) error {
				info = ti
				return tt.err
			}), readTestdata(t, "timer.json"))
			if rec.Code != tt.wantStatus || !info.AdjustForDST || info.Next.IsZero() {
				t.Fatalf("status %d info %+v", rec.Code, info)
			}
		})
	}
}

func TestPermanent(t *testing.T) {
	t.Parallel()
	if Permanent(nil) != nil {
		t.Fatal("Permanent(nil) != nil")
	}
	base := apperr.New(apperr.KindConflict, "already_sealed", "x")
	p := Permanent(base)
	wrapped := errors.Join(errors.New("context"), p)
	if !IsPermanent(p) || !IsPermanent(wrapped) || IsPermanent(base) {
		t.Fatal("IsPermanent wrong")
	}
	if !errors.Is(p, base) || apperr.KindOf(p) != apperr.KindConflict {
		t.Fatal("the mark hides the cause")
	}
	if Permanent(p) != p {
		t.Fatal("double marking wraps twice")
	}
}
