// Command svcconnect is the source-system connector's command line (package cli): it drives the
// dispatcher from a CRM, an ERP, a script or a shell. svcconnect help lists the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/esign-svc/esign/connector/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.LookupEnv,
		Interactive: terminal(os.Stdin), ProgressTTY: terminal(os.Stderr),
	})
	stop()
	os.Exit(code)
}

// terminal is whether f is a terminal: a character device other than /dev/null.
func terminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}
