// Command devlicensing serves the local stand-in of the operator's licensing service
// (devtools/licensingstub) for `make run`: POST /v1/validate, POST /v1/usage, GET /v1/health,
// bearers verified against the operator's public key, and GET /_stub/received listing what the
// apps sent. It never prints a licence.
//
//	go run ./devtools/cmd/devlicensing --public-key <base64 or PEM> [--listen 127.0.0.1:7073] [--refuse tenant=reason ...]
//
// --public-key defaults to $LICENCE_PUBLIC_KEY (set by .local/dev.env). --refuse (repeatable)
// refuses a tenant, or one feature of a tenant ("<tid>/workflow=reason").
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/esign-svc/esign/devtools/devkeys"
	"github.com/esign-svc/esign/devtools/licensingstub"
	"github.com/esign-svc/esign/shared/licence"
)

type rules map[string]string

func (r rules) String() string { return fmt.Sprint(map[string]string(r)) }

func (r rules) Set(v string) error {
	k, reason, ok := strings.Cut(v, "=")
	if !ok || k == "" || reason == "" {
		return errors.New("want <tenantId>[/<feature>]=<reason>")
	}
	r[k] = reason
	return nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "devlicensing:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("devlicensing", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:7073", "address to serve on")
	keyText := fs.String("public-key", os.Getenv(licence.SettingPublicKey), "the operator's Ed25519 public key (LICENCE_PUBLIC_KEY)")
	refuse := rules{}
	fs.Var(refuse, "refuse", "refuse <tenantId>[/<feature>]=<reason> (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	key, err := licence.ParsePublicKey(*keyText)
	if err != nil {
		return fmt.Errorf("--public-key: %w", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	fmt.Printf("local licensing service: http://%s (what it was sent: GET http://%s%s)\n", ln.Addr(), ln.Addr(), licensingstub.ReceivedPath)
	return devkeys.Serve(ln, licensingstub.New(key, refuse))
}
