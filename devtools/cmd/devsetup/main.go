// Command devsetup makes the local development keys and settings under a directory (default
// .local), only where missing, and rewrites <dir>/dev.env. It never prints a secret.
//
//	go run ./devtools/cmd/devsetup --dir .local [--base-url http://127.0.0.1:7071] [--portal-url URL] [--oauth-url URL] [--pki-url URL]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/esign-svc/esign/devtools/devkeys"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "devsetup:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("devsetup", flag.ContinueOnError)
	dir := fs.String("dir", ".local", "directory for keys/ and dev.env")
	base := fs.String("base-url", devkeys.DefaultBaseURL, "BASE_URL of the local Functions host")
	portal := fs.String("portal-url", "", "PORTAL_URL (default <base-url>/portal)")
	oauth := fs.String("oauth-url", devkeys.DefaultOAuthURL, "the dev OAuth token endpoint's base (devtools/cmd/devoauth), the connector's SERVICE_DISPATCHER_AUTHORITY_URL")
	pki := fs.String("pki-url", "", "where devtools/cmd/devpki serves the development PKI (make run: "+devkeys.DefaultPKIURL+"); empty: a self-signed seal and no TSA")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	res, err := devkeys.Setup(*dir, devkeys.Options{BaseURL: *base, PortalURL: *portal, OAuthURL: *oauth, PKIURL: *pki})
	if err != nil {
		return err
	}
	if len(res.Created) > 0 {
		fmt.Fprintf(out, "created under %s/%s: %s\n", res.Dir, devkeys.KeysDir, strings.Join(res.Created, ", "))
	} else {
		fmt.Fprintf(out, "all keys present under %s/%s\n", res.Dir, devkeys.KeysDir)
	}
	fmt.Fprintf(out, "wrote %s\n", res.EnvFile)
	return nil
}
