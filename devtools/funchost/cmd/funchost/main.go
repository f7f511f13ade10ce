// Command funchost runs Azure Functions custom-handler apps locally (see package funchost):
//
//	go run ./devtools/funchost/cmd/funchost --app dist/dispatcher --app dist/processor \
//	    --listen 127.0.0.1:7071 --env-file .local/dev.env
//
// App settings are the process environment overlaid with the --env-file lines (KEY=value; the
// file wins, so .local/dev.env is authoritative). Storage is the setting AzureWebJobsStorage;
// when it is unset, STORAGE_CONNECTION_STRING is used in its place. Keys come from
// --host-key/--master-key, else the settings HOST_KEY/MASTER_KEY, else they are generated and
// printed. Ctrl-C stops the host and the handlers.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/esign-svc/esign/devtools/funchost"
)

type appList []string

func (a *appList) String() string     { return strings.Join(*a, ",") }
func (a *appList) Set(v string) error { *a = append(*a, v); return nil }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := realMain(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "funchost:", err)
		os.Exit(1)
	}
}

func realMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("funchost", flag.ContinueOnError)
	var apps appList
	fs.Var(&apps, "app", "app folder (host.json, function folders, handler); repeat for several apps")
	listen := fs.String("listen", "127.0.0.1:7071", "HTTP listen address")
	envFile := fs.String("env-file", "", "file of KEY=value app settings")
	hostKey := fs.String("host-key", "", "default function key (default: setting HOST_KEY, else generated)")
	masterKey := fs.String("master-key", "", "master key (default: setting MASTER_KEY, else generated)")
	documented := fs.Bool("documented-shape", false, "send invocation requests in the documented shape instead of the observed one")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(apps) == 0 {
		return errors.New("at least one --app is required")
	}
	settings := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			settings[k] = v
		}
	}
	if *envFile != "" {
		fileSettings, err := readEnvFile(*envFile)
		if err != nil {
			return err
		}
		for k, v := range fileSettings {
			settings[k] = v
		}
	}
	if settings["AzureWebJobsStorage"] == "" && settings["STORAGE_CONNECTION_STRING"] != "" {
		settings["AzureWebJobsStorage"] = settings["STORAGE_CONNECTION_STRING"]
	}
	if *hostKey == "" {
		*hostKey = settings["HOST_KEY"]
	}
	if *masterKey == "" {
		*masterKey = settings["MASTER_KEY"]
	}
	printHost, printMaster := *hostKey == "", *masterKey == ""
	opts := funchost.Options{Apps: apps, Listen: *listen, Settings: settings, HostKey: *hostKey, MasterKey: *masterKey, Output: os.Stdout}
	if *documented {
		opts.Shape = funchost.ShapeDocumented
	}
	h, err := funchost.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer h.Close()
	// Only generated keys are printed: the caller cannot know them otherwise.
	if printHost {
		fmt.Printf("generated host key:   %s\n", h.HostKey())
	}
	if printMaster {
		fmt.Printf("generated master key: %s\n", h.MasterKey())
	}
	fmt.Printf("Functions host ready: %s/\n", h.URL())
	<-ctx.Done()
	fmt.Println("stopping")
	return nil
}

// readEnvFile reads KEY=value lines; blank lines and # comments are skipped, "export " is
// allowed, and values may be wrapped in single or double quotes.
func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("env file: %w", err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("env file %s line %d: want KEY=value", path, n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		out[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("env file %s: %w", path, err)
	}
	return out, nil
}
