package funchost

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RequestShape selects how invocation requests are written.
type RequestShape int

const (
	// ShapeObserved is what the real host sends: queue messages JSON-encoded twice,
	// DequeueCount as a string, Id and PopReceipt with embedded quotes, Query as a JSON string.
	ShapeObserved RequestShape = iota
	// ShapeDocumented is the shape Microsoft's documentation shows: message JSON-encoded once,
	// DequeueCount a number, Query an object.
	ShapeDocumented
)

// Options configure a Host. Apps is required; everything else has a default.
type Options struct {
	// Apps are app folders (host.json, function folders, handler executable). Each app's name
	// is its folder's base name.
	Apps []string
	// Listen is the HTTP front end's address; default 127.0.0.1:7071. Port 0 picks a free port
	// (see Host.URL).
	Listen string
	// Settings are the app settings: the handler's environment, %NAME% references and storage
	// connections (AzureWebJobsStorage by default).
	Settings map[string]string
	// HostKey is the default function key accepted on authLevel function routes; MasterKey is
	// accepted everywhere and required on authLevel admin routes and /admin. Empty keys are
	// generated (see Host.HostKey, Host.MasterKey).
	HostKey, MasterKey string
	// Shape selects the invocation request shape; default ShapeObserved.
	Shape RequestShape
	// Output receives the host's log lines and the handlers' output; default os.Stderr.
	Output io.Writer
	// ReadyTimeout bounds the wait for each handler's GET / ping; default 30s.
	ReadyTimeout time.Duration
	// DisableSchedules stops timers from firing on their schedules (runOnStartup included);
	// RunTimer and the admin endpoint still fire them. Tests use it for determinism.
	DisableSchedules bool
	// MaxInvocationBody is the largest request body an HTTP invocation accepts (413 beyond it,
	// with Connection: close); default 100 MB, the real host's limit. Forwarded requests are
	// streamed and have no limit here.
	MaxInvocationBody int64
	// MinPollingInterval is a queue listener's first wait after an empty poll, from which it
	// backs off; default 100ms, the real host's fixed minimum. A test sets it long to see that
	// only a wake-up (queueWatcher) can have started an invocation.
	MinPollingInterval time.Duration
	// DropOutput is a test hook, nil (off) by default and never set by cmd/funchost: when it
	// returns true for a queue output message (the function's name, the output binding's name
	// and the message's JSON text) the host does not write that message, as if the host had
	// lost it after the handler answered. Tests of at-least-once delivery use it to lose one
	// message; it is called from concurrent invocations.
	DropOutput func(function, binding string, message []byte) bool
}

// app is one loaded app folder.
type app struct {
	name        string
	dir         string
	host        *hostJSON
	routePrefix string
	queues      queueSettings
	timeout     time.Duration
	functions   []*function
	proc        atomic.Pointer[handlerProcess] // replaced by RestartHandler
}

// Host is a running local Functions host. Close it when done.
type Host struct {
	opts    Options
	log     *logger
	apps    []*app
	fns     []*function
	ln      net.Listener
	srv     *http.Server
	queues  *queueClients
	watcher queueWatcher
	client  *http.Client
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	once    sync.Once
	paused  atomic.Bool // queue triggers hold off polling (benchmarks time one app alone)
}

// PauseQueues stops every queue trigger from fetching new messages (those already running
// finish) until ResumeQueues: a benchmark times the HTTP side without the processor's jobs
// competing for the machine, then lets them drain.
func (h *Host) PauseQueues() { h.paused.Store(true) }

// ResumeQueues lets the queue triggers poll again.
func (h *Host) ResumeQueues() { h.paused.Store(false) }

// Start loads the apps, starts their handlers (waiting for each to answer GET /), creates the
// queues the functions use, and serves HTTP triggers, queue triggers and timers until ctx ends
// or Close is called.
// Errors: a missing or invalid host.json/function.json, an unresolved %SETTING%, a missing
// storage connection for a queue binding, a handler that exits or does not answer before
// ReadyTimeout, storage that cannot be reached, or a listen address in use.
func Start(ctx context.Context, opts Options) (*Host, error) {
	if len(opts.Apps) == 0 {
		return nil, errors.New("funchost: no app folders given")
	}
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:7071"
	}
	if opts.Output == nil {
		opts.Output = os.Stderr
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 30 * time.Second
	}
	if opts.MinPollingInterval == 0 {
		opts.MinPollingInterval = minPollingInterval
	}
	if opts.MaxInvocationBody == 0 {
		opts.MaxInvocationBody = 100 << 20
	}
	if opts.Settings == nil {
		opts.Settings = map[string]string{}
	}
	if opts.HostKey == "" {
		opts.HostKey = randomKey()
	}
	if opts.MasterKey == "" {
		opts.MasterKey = randomKey()
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h := &Host{opts: opts, log: &logger{out: opts.Output}, queues: newQueueClients(),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}, ctx: hctx, cancel: cancel}
	if err := h.load(); err != nil {
		cancel()
		return nil, fmt.Errorf("funchost: %w", err)
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("funchost: listen %s: %w", opts.Listen, err)
	}
	h.ln = ln
	if err := h.startHandlers(ctx); err != nil {
		h.Close()
		return nil, fmt.Errorf("funchost: %w", err)
	}
	if err := h.createQueues(ctx); err != nil {
		h.Close()
		return nil, fmt.Errorf("funchost: %w", err)
	}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		if err := h.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.log.printf("[host] http server: %v", err)
		}
	}()
	for _, f := range h.fns {
		switch f.kind {
		case triggerQueue:
			h.startQueueListener(f)
		case triggerTimer:
			if !opts.DisableSchedules {
				h.startTimer(f)
			}
		}
	}
	go func() {
		select {
		case <-ctx.Done():
			h.Close()
		case <-hctx.Done():
		}
	}()
	h.printFunctions()
	h.log.printf("[host] listening on %s", h.URL())
	return h, nil
}

func (h *Host) load() error {
	seen := map[string]bool{}
	for _, dir := range h.opts.Apps {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		hj, fjs, err := readApp(abs)
		if err != nil {
			return err
		}
		a := &app{name: filepath.Base(abs), dir: abs, host: hj, routePrefix: "api"}
		if len(fjs) == 0 {
			h.log.printf("[host] app %s: no job functions found (the handler is started anyway, as the real host does)", a.name)
		}
		if seen[strings.ToLower(a.name)] {
			return fmt.Errorf("two apps are named %s", a.name)
		}
		seen[strings.ToLower(a.name)] = true
		if p := hj.Extensions.HTTP.RoutePrefix; p != nil {
			a.routePrefix = strings.Trim(*p, "/")
		}
		if a.queues, err = hj.queues(); err != nil {
			return fmt.Errorf("app %s: host.json: %w", a.name, err)
		}
		a.timeout = hj.FunctionTimeout.or(5 * time.Minute)
		names := make([]string, 0, len(fjs))
		for n := range fjs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if fjs[n].Disabled {
				continue
			}
			f, err := newFunction(a, n, fjs[n], h.opts.Settings)
			if err != nil {
				return fmt.Errorf("app %s: %w", a.name, err)
			}
			a.functions = append(a.functions, f)
			h.fns = append(h.fns, f)
		}
		h.apps = append(h.apps, a)
	}
	return checkRouteConflicts(h.fns)
}

// checkRouteConflicts rejects two HTTP functions with the same template and a common method.
func checkRouteConflicts(fns []*function) error {
	for i, a := range fns {
		for _, b := range fns[i+1:] {
			if a.kind != triggerHTTP || b.kind != triggerHTTP || !strings.EqualFold(a.route.template, b.route.template) {
				continue
			}
			overlap := len(a.methods) == 0 || len(b.methods) == 0
			for m := range a.methods {
				overlap = overlap || b.methods[m]
			}
			if overlap {
				return fmt.Errorf("functions %s/%s and %s/%s both serve route %q", a.app.name, a.name, b.app.name, b.name, a.route.template)
			}
		}
	}
	return nil
}

func (h *Host) startHandlers(ctx context.Context) error {
	for _, a := range h.apps {
		p, err := startHandler(ctx, a, h.opts.Settings, h.log, h.opts.ReadyTimeout)
		if err != nil {
			return err
		}
		a.proc.Store(p)
		h.watch(a, p)
	}
	return nil
}

// watch reports a handler that exits while it is still the app's handler.
func (h *Host) watch(a *app, p *handlerProcess) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		select {
		case <-p.done:
			if a.proc.Load() == p {
				h.log.printf("[host] app %s: handler exited unexpectedly (%v); its invocations fail until the host restarts", a.name, p.waitErr)
			}
		case <-h.ctx.Done():
		}
	}()
}

func (h *Host) printFunctions() {
	for _, f := range h.fns {
		switch f.kind {
		case triggerHTTP:
			methods := make([]string, 0, len(f.methods))
			for m := range f.methods {
				methods = append(methods, m)
			}
			sort.Strings(methods)
			mode := "invocation"
			if f.forward {
				mode = "forwarded"
			}
			h.log.printf("[host] %s/%s: [%s] %s/%s (%s, authLevel %s)", f.app.name, f.name, strings.Join(methods, ","), h.URL(), f.route.template, mode, f.authLevel)
		case triggerQueue:
			h.log.printf("[host] %s/%s: queueTrigger %s", f.app.name, f.name, f.trigger.QueueName)
		case triggerTimer:
			h.log.printf("[host] %s/%s: timerTrigger %q", f.app.name, f.name, f.schedule.expr)
		}
	}
}

// HandlerPID is the process id of app's running handler (the app folder's base name), 0 when
// there is no such app. Benchmarks read the handler's memory from /proc/<pid>/status.
func (h *Host) HandlerPID(app string) int {
	for _, a := range h.apps {
		if p := a.proc.Load(); a.name == app && p != nil {
			return p.cmd.Process.Pid
		}
	}
	return 0
}

// URL is the front end's base URL, e.g. "http://127.0.0.1:7071" (no trailing slash).
func (h *Host) URL() string { return "http://" + h.ln.Addr().String() }

// HostKey is the default function key; MasterKey the master key.
func (h *Host) HostKey() string { return h.opts.HostKey }

// MasterKey is the master (admin) key.
func (h *Host) MasterKey() string { return h.opts.MasterKey }

// Close stops the listeners, waits briefly for running invocations, and stops the handlers
// (SIGTERM, then SIGKILL after five seconds). It is safe to call more than once.
func (h *Host) Close() error {
	h.once.Do(func() {
		h.cancel()
		if h.srv != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = h.srv.Shutdown(sctx)
			cancel()
		} else if h.ln != nil {
			h.ln.Close()
		}
		for _, a := range h.apps {
			if p := a.proc.Load(); p != nil {
				p.stop()
			}
		}
		h.wg.Wait()
		h.log.printf("[host] stopped")
	})
	return nil
}

// lookup finds a function by name ("Name" or "app/Name"), case-insensitively.
func (h *Host) lookup(name string) (*function, error) {
	appName, fnName, qualified := strings.Cut(name, "/")
	if !qualified {
		fnName, appName = appName, ""
	}
	var found []*function
	for _, f := range h.fns {
		if strings.EqualFold(f.name, fnName) && (appName == "" || strings.EqualFold(f.app.name, appName)) {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("funchost: no function %q", name)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("funchost: function name %q is in several apps; use app/name", name)
}

func randomKey() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newGUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
