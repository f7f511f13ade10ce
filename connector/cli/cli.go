// Package cli is the svcconnect command line: every command over the typed client, the jobs
// store and the worker. Run is the whole program but for the process (cmd/svcconnect wires
// os.Args, the standard streams, the environment and whether stdin is a terminal), so tests run
// it in-process.
package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/esign-svc/esign/connector/client"
	"github.com/esign-svc/esign/connector/jobs"
	"github.com/esign-svc/esign/connector/settings"
	"github.com/esign-svc/esign/connector/worker"
)

// Env is the process around a run.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv looks a variable up (os.LookupEnv in the program).
	Getenv settings.Lookup
	// Interactive is true when stdin is a terminal: a confirmation or a choice may be asked.
	Interactive bool
	// ProgressTTY is true when stderr is a terminal: progress bars are drawn.
	ProgressTTY bool
}

// usageError is a wrong command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

const usage = `svcconnect: drive the dispatcher from a source system (CRM, ERP), a script or a shell.

Usage: svcconnect [--config FILE] [--output text|json] <command> [flags]
       (svcconnect <command> -h for its flags)

  settings                       the settings in force (secrets hidden)
  upload FILE.pdf                store a PDF; prints pdfBlobPath and pdfHash
  sign FILE.pdf --signer role:email[:name] ...
                                 upload a local PDF and create a signing session
  status CORRELATION_ID [--wait STATE]
                                 a signing session's state (and its slots and timeline)
  deliver FILE.pdf|--blob PATH --to email[:name] ...
                                 secure delivery of a document
  render --template PATH --data FILE(.json|.csv|.xlsx) [--profile crm|erp]
                                 one record, or a batch by the profile's thresholds
  batch list|show|decide|cancel|receipt
  workflow create|status|export
  jobs list|show|work|retry|purge   the background jobs (ERP profile)
  webhooks add|list|remove|deliveries|ping|rotate
                                 the tenant's event subscriptions (Service.Admin)
  webhooks listen --port N       print the events POSTed to http://127.0.0.1:N/ whose
                                 signature verifies with $SVCCONNECT_WEBHOOK_SECRET

Settings come from the environment, over a file given by --config or SVCCONNECT_CONFIG
(KEY=value lines, such as .local/dev.env). Every command takes --output text|json.
`

// Run runs one command line and returns the exit status: 0, 1 for a failure, 2 for a wrong
// command line. Errors are printed to env.Stderr.
func Run(ctx context.Context, args []string, env Env) int {
	err := run(ctx, args, env)
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(env.Stderr, "svcconnect:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

type command func(ctx context.Context, a *app, args []string) error

var commands = map[string]command{
	"settings": cmdSettings,
	"upload":   cmdUpload,
	"sign":     cmdSign,
	"status":   cmdStatus,
	"deliver":  cmdDeliver,
	"render":   cmdRender,
	"batch":    cmdBatch,
	"workflow": cmdWorkflow,
	"jobs":     cmdJobs,
	"webhooks": cmdWebhooks,
}

func run(ctx context.Context, args []string, env Env) error {
	a := &app{env: env, output: "text"}
	// --config and --output may also come before the command.
	for len(args) > 0 {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		if !strings.HasPrefix(args[0], "-") || (name != "config" && name != "output") {
			break
		}
		if !hasVal {
			if len(args) < 2 {
				return usagef("--%s needs a value", name)
			}
			val, args = args[1], args[1:]
		}
		args = args[1:]
		if name == "config" {
			a.config = val
		} else {
			a.output = val
		}
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(env.Stdout, usage)
		if len(args) == 0 {
			return usagef("a command is needed")
		}
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return usagef("unknown command %q (svcconnect help lists them)", args[0])
	}
	a.name = args[0]
	defer a.close()
	return cmd(ctx, a, args[1:])
}

// app is one run: its flags, settings and the pieces opened on demand.
type app struct {
	env    Env
	name   string
	config string
	output string
	set    *settings.Settings
	cl     *client.Client
	store  *jobs.Store
}

// flags makes a command's flag set with the common flags (--config, --output).
func (a *app) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("svcconnect "+name, flag.ContinueOnError)
	fs.SetOutput(a.env.Stderr)
	fs.StringVar(&a.config, "config", a.config, "settings file (KEY=value lines); default $SVCCONNECT_CONFIG")
	fs.StringVar(&a.output, "output", a.output, "text or json")
	return fs
}

// parse parses args, allowing flags after the positional arguments, and checks --output and the
// number of positional arguments (want; -1: any).
func (a *app) parse(fs *flag.FlagSet, args []string, want int, what string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if a.output != "text" && a.output != "json" {
		return nil, usagef("--output must be text or json, not %q", a.output)
	}
	if want >= 0 && len(pos) != want {
		return nil, usagef("%s: want %s", fs.Name(), what)
	}
	return pos, nil
}

// withClient parses args (as parse) and makes the client.
func (a *app) withClient(fs *flag.FlagSet, args []string, want int, what string) ([]string, *client.Client, error) {
	pos, err := a.parse(fs, args, want, what)
	if err != nil {
		return nil, nil, err
	}
	cl, err := a.client()
	return pos, cl, err
}

// withStore parses args (as parse) and opens the jobs store.
func (a *app) withStore(ctx context.Context, fs *flag.FlagSet, args []string, want int, what string) ([]string, *jobs.Store, error) {
	pos, err := a.parse(fs, args, want, what)
	if err != nil {
		return nil, nil, err
	}
	st, err := a.jobStore(ctx)
	return pos, st, err
}

// settings loads the settings once.
func (a *app) settings() (*settings.Settings, error) {
	if a.set != nil {
		return a.set, nil
	}
	path := a.config
	if path == "" {
		path, _ = a.env.Getenv("SVCCONNECT_CONFIG")
	}
	var file settings.Lookup
	if path != "" {
		m, err := settings.ReadFile(path)
		if err != nil {
			return nil, err
		}
		file = settings.Map(m)
	}
	s, err := settings.Load(settings.Layer(a.env.Getenv, file))
	if err != nil {
		return nil, fmt.Errorf("settings:\n%w", err)
	}
	a.set = &s
	return a.set, nil
}

// client makes the dispatcher client once.
func (a *app) client() (*client.Client, error) {
	if a.cl != nil {
		return a.cl, nil
	}
	s, err := a.settings()
	if err != nil {
		return nil, err
	}
	tokens := &client.ClientCredentials{TokenURL: s.TokenURL(), ClientID: s.ClientID, ClientSecret: s.ClientSecret, Scope: s.Scope}
	a.cl = client.New(s.BaseURL, s.Code, tokens)
	return a.cl, nil
}

// jobStore opens the store once, its notices owed per SERVICE_BATCH_NOTIFY_ON when a webhook
// is set.
func (a *app) jobStore(ctx context.Context) (*jobs.Store, error) {
	if a.store != nil {
		return a.store, nil
	}
	s, err := a.settings()
	if err != nil {
		return nil, err
	}
	st, err := jobs.Open(ctx, s.StorePath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", settings.KeyStorePath, err)
	}
	if s.NotifyWebhookURL != "" {
		st.Notify = worker.Wants(s.NotifyOn)
	}
	a.store = st
	return st, nil
}

func (a *app) close() {
	if a.store != nil {
		a.store.Close()
	}
}

// emit prints v as JSON (--output json) or through text.
func (a *app) emit(v any, text func(w io.Writer)) error {
	if a.output == "json" {
		enc := json.NewEncoder(a.env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(a.env.Stdout)
	return nil
}

// confirm asks a yes/no question at a terminal; false without one.
func (a *app) confirm(question string) bool {
	if !a.env.Interactive {
		return false
	}
	fmt.Fprintf(a.env.Stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(a.env.Stdin).ReadString('\n')
	line = strings.ToLower(strings.TrimSpace(line))
	return line == "y" || line == "yes"
}

// ask asks for one of choices at a terminal ("" without one, or for an answer not among them).
func (a *app) ask(question string, choices ...string) string {
	if !a.env.Interactive {
		return ""
	}
	fmt.Fprintf(a.env.Stderr, "%s [%s] ", question, strings.Join(choices, "/"))
	line, _ := bufio.NewReader(a.env.Stdin).ReadString('\n')
	line = strings.ToLower(strings.TrimSpace(line))
	for _, c := range choices {
		if line == c || (line != "" && strings.HasPrefix(c, line)) {
			return c
		}
	}
	return ""
}

func cmdSettings(_ context.Context, a *app, args []string) error {
	fs := a.flags("settings")
	if _, err := a.parse(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	s, err := a.settings()
	if err != nil {
		return err
	}
	// Never the secrets: the JSON form is the masked listing too.
	lines := strings.Split(strings.TrimSpace(s.String()), "\n")
	m := map[string]string{}
	for _, l := range lines {
		k, v, _ := strings.Cut(l, "=")
		m[k] = v
	}
	return a.emit(m, func(w io.Writer) { fmt.Fprint(w, s.String()) })
}

// readFile reads a local file named on the command line, the error naming the flag.
func readFile(flagName, path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	return b, nil
}
