// Command devtoken prints a dev JWT signed with the dev identity-provider key that devsetup made,
// for the AUTH_ISSUER and AUTH_AUDIENCE in <dir>/dev.env.
//
//	go run ./tests/cmd/devtoken --dir .local [--tenant T] [--roles Esign.Initiator,Service.Admin] [--ttl 1h]
//
// --roles "" mints a token without roles (to try a 403).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/esign-svc/esign/tests/devkeys"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "devtoken:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("devtoken", flag.ContinueOnError)
	dir := fs.String("dir", ".local", "directory devsetup wrote")
	tenant := fs.String("tenant", devkeys.DevTenantID, "tid claim")
	roles := fs.String("roles", "Esign.Initiator", "comma-separated roles claim")
	ttl := fs.Duration("ttl", time.Hour, "lifetime")
	sub := fs.String("sub", "", "sub claim (default derived from the tenant)")
	name := fs.String("name", "", "name claim (default Dev User)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if *ttl <= 0 || *ttl > 30*24*time.Hour {
		return fmt.Errorf("--ttl must be between 1s and 720h")
	}
	if strings.TrimSpace(*tenant) == "" {
		return fmt.Errorf("--tenant must not be empty")
	}
	var list []string
	for _, r := range strings.Split(*roles, ",") {
		if r = strings.TrimSpace(r); r != "" {
			list = append(list, r)
		}
	}
	tok, err := devkeys.MintFromDir(*dir, devkeys.TokenOptions{Tenant: *tenant, Roles: list,
		NoRoles: len(list) == 0, TTL: *ttl, Subject: *sub, Name: *name})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, tok)
	return err
}
