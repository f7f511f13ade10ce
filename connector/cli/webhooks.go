package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/esign-svc/esign/connector/client"
	"github.com/esign-svc/esign/shared/webhook"
)

// KeyListenSecret names the variable webhooks listen reads its secret(s) from (space or comma
// separated: during a rotation both verify). A secret is never taken on the command line,
// where other users of the machine could read it.
const KeyListenSecret = "SVCCONNECT_WEBHOOK_SECRET"

// maxEventBody bounds a received event.
const maxEventBody = 1 << 20

func cmdWebhooks(ctx context.Context, a *app, args []string) error {
	return sub(ctx, a, "webhooks", args, map[string]command{
		"add": webhooksAdd, "list": webhooksList, "remove": webhooksRemove, "deliveries": webhooksDeliveries,
		"ping": webhooksPing, "rotate": webhooksRotate, "listen": webhooksListen,
	})
}

// events is a repeatable --event flag.
type events []string

func (e *events) String() string     { return strings.Join(*e, ",") }
func (e *events) Set(v string) error { *e = append(*e, v); return nil }

func webhooksAdd(ctx context.Context, a *app, args []string) error {
	fs := a.flags("webhooks add")
	var ev events
	fs.Var(&ev, "event", "an event type to receive (repeatable; default: every type, \"*\")")
	desc := fs.String("description", "", "a note for the subscription")
	pos, cl, err := a.withClient(fs, args, 1, "one URL")
	if err != nil {
		return err
	}
	if len(ev) == 0 {
		ev = events{"*"}
	}
	w, err := cl.CreateWebhook(ctx, client.WebhookRequest{URL: pos[0], Events: ev, Description: *desc})
	if err != nil {
		return err
	}
	return a.emit(w, func(out io.Writer) {
		fmt.Fprintf(out, "%s %s %s\n", w.ID, w.URL, strings.Join(w.Events, ","))
		fmt.Fprintf(out, "secret (shown once; give it to the receiver, e.g. %s for webhooks listen): %s\n", KeyListenSecret, w.Secret)
	})
}

func webhooksList(ctx context.Context, a *app, args []string) error {
	fs := a.flags("webhooks list")
	_, cl, err := a.withClient(fs, args, 0, "no arguments")
	if err != nil {
		return err
	}
	list, err := cl.ListWebhooks(ctx)
	if err != nil {
		return err
	}
	return a.emit(struct {
		Items []client.Webhook `json:"items"`
	}{list}, func(out io.Writer) {
		for _, w := range list {
			fmt.Fprintf(out, "%s %-8s %s %s", w.ID, w.State, w.URL, strings.Join(w.Events, ","))
			if w.DisabledReason != "" {
				fmt.Fprintf(out, " (%s)", w.DisabledReason)
			}
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%d subscriptions\n", len(list))
	})
}

func webhooksRemove(ctx context.Context, a *app, args []string) error {
	fs := a.flags("webhooks remove")
	pos, cl, err := a.withClient(fs, args, 1, "one ID")
	if err != nil {
		return err
	}
	if err := cl.DeleteWebhook(ctx, pos[0]); err != nil {
		return err
	}
	return a.emit(map[string]string{"id": pos[0], "state": "deleted"}, func(out io.Writer) { fmt.Fprintf(out, "%s deleted\n", pos[0]) })
}

func webhooksDeliveries(ctx context.Context, a *app, args []string) error {
	fs := a.flags("webhooks deliveries")
	limit := fs.Int("limit", 0, "attempts per page (1 to 200; default the service's)")
	cursor := fs.String("cursor", "", "the previous page's next cursor")
	pos, cl, err := a.withClient(fs, args, 1, "one ID")
	if err != nil {
		return err
	}
	d, err := cl.ListWebhookDeliveries(ctx, pos[0], *limit, *cursor)
	if err != nil {
		return err
	}
	return a.emit(d, func(out io.Writer) {
		for _, at := range d.Items {
			fmt.Fprintf(out, "%s %-22s %s #%d %-9s %3d %dms %s\n", at.At, at.Type, at.EventID, at.Attempt, at.Outcome, at.Status, at.DurationMs, at.Error)
		}
		if d.NextCursor != "" {
			fmt.Fprintf(out, "more: --cursor %s\n", d.NextCursor)
		}
	})
}

func webhooksPing(ctx context.Context, a *app, args []string) error {
	fs := a.flags("webhooks ping")
	pos, cl, err := a.withClient(fs, args, 1, "one ID")
	if err != nil {
		return err
	}
	at, err := cl.PingWebhook(ctx, pos[0])
	if err != nil {
		return err
	}
	return a.emit(at, func(out io.Writer) {
		fmt.Fprintf(out, "%s %s %d %dms %s\n", at.EventID, at.Outcome, at.Status, at.DurationMs, at.Error)
	})
}

func webhooksRotate(ctx context.Context, a *app, args []string) error {
	fs := a.flags("webhooks rotate")
	pos, cl, err := a.withClient(fs, args, 1, "one ID")
	if err != nil {
		return err
	}
	w, err := cl.RotateWebhookSecret(ctx, pos[0])
	if err != nil {
		return err
	}
	return a.emit(w, func(out io.Writer) {
		fmt.Fprintf(out, "new secret (shown once): %s\nthe old one signs until %s\n", w.Secret, w.PreviousSecretExpiresAt)
	})
}

// received is one verified event as listen prints it.
type received struct {
	WebhookID string          `json:"webhookId"`
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// webhooksListen serves http://127.0.0.1:PORT/ and prints each event whose Standard Webhooks
// signature verifies (a repeated webhook-id is a retry: marked so); anything else is answered
// 401 and reported on stderr. It runs until interrupted.
func webhooksListen(ctx context.Context, a *app, args []string) error {
	fs := a.flags("webhooks listen")
	port := fs.Int("port", 0, "the local port to listen on (required)")
	if _, err := a.parse(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	if *port < 1 || *port > 65535 {
		return usagef("webhooks listen: --port must be 1 to 65535")
	}
	raw, _ := a.env.Getenv(KeyListenSecret)
	secrets := strings.FieldsFunc(raw, func(r rune) bool { return r == ' ' || r == ',' })
	if len(secrets) == 0 {
		return fmt.Errorf("webhooks listen: %s must hold the subscription's secret (whsec_...)", KeyListenSecret)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)))
	if err != nil {
		return err
	}
	var mu sync.Mutex // one event printed at a time
	seen := map[string]bool{}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEventBody))
		if err != nil || r.Method != http.MethodPost {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		id, err := webhook.VerifyStandard(secrets, r.Header, body, time.Now())
		if err != nil {
			fmt.Fprintf(a.env.Stderr, "refused a request: its signature does not verify with %s\n", KeyListenSecret)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var ev received
		_ = json.Unmarshal(body, &ev)
		ev.WebhookID = id
		mu.Lock()
		defer mu.Unlock()
		retry := seen[id]
		seen[id] = true
		_ = a.emit(ev, func(out io.Writer) {
			note := ""
			if retry {
				note = " (again)"
			}
			fmt.Fprintf(out, "%s %s %s %s%s\n", ev.Timestamp, ev.Type, id, ev.Data, note)
		})
		w.WriteHeader(http.StatusNoContent)
	})}
	fmt.Fprintf(a.env.Stderr, "listening on http://%s/ (subscribe it with: svcconnect webhooks add http://%s/)\n", ln.Addr(), ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		return nil
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}
