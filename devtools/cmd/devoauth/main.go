// Command devoauth serves the dev identity provider's OAuth 2.0 token endpoint (client
// credentials) for `make run`, so the connector (svcconnect) gets tokens the running service
// accepts: POST http://<listen>/<dev tenant>/oauth2/v2.0/token. It reads the keys and settings
// that devtools/cmd/devsetup wrote under --dir. It never prints a secret or a token.
//
//	go run ./devtools/cmd/devoauth --dir .local [--listen 127.0.0.1:7072]
package main

import (
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/esign-svc/esign/devtools/devkeys"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "devoauth:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("devoauth", flag.ContinueOnError)
	dir := fs.String("dir", ".local", "directory of keys/ and dev.env (devtools/cmd/devsetup)")
	listen := fs.String("listen", "127.0.0.1:7072", "address to serve on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	srv, err := devkeys.NewDevOAuthServer(*dir)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	fmt.Printf("dev OAuth token endpoint: http://%s/%s/oauth2/v2.0/token\n", ln.Addr(), srv.Tenant)
	return devkeys.Serve(ln, srv)
}
