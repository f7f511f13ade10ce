// Command devtoken prints a dev JWT signed with the dev identity-provider key that devsetup made,
// for the AUTH_ISSUER and AUTH_AUDIENCE in <dir>/dev.env.
//
//	go run ./devtools/cmd/devtoken --dir .local [--tenant T] [--roles Esign.Initiator,Service.Admin] [--ttl 1h]
//	    [--sub alice] [--oid <object id>] [--name Alice]
//
// --roles "" mints a token without roles (to try a 403). The service knows a user by the oid
// claim: --sub alone derives a stable oid from the tenant and the sub, so `--sub alice` and
// `--sub bob` are two people of one tenant (a batch's submitter and its approver, say); --oid
// sets it outright. The token's preferred_username, the caller's address, is
// <sub>@dev.example.test.
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/esign-svc/esign/devtools/devkeys"
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
	oid := fs.String("oid", "", "oid claim, the user's identity (default derived from --sub, else the dev user's)")
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
	objectID := strings.TrimSpace(*oid)
	if objectID == "" && strings.TrimSpace(*sub) != "" {
		objectID = derivedOID(*tenant, *sub)
	}
	var list []string
	for _, r := range strings.Split(*roles, ",") {
		if r = strings.TrimSpace(r); r != "" {
			list = append(list, r)
		}
	}
	tok, err := devkeys.MintFromDir(*dir, devkeys.TokenOptions{Tenant: *tenant, Roles: list,
		NoRoles: len(list) == 0, TTL: *ttl, Subject: *sub, ObjectID: objectID, Name: *name})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, tok)
	return err
}

// derivedOID is a stable UUID-shaped object id for a (tenant, sub) pair, so a sub names the same
// person on every mint and two subs are two people.
func derivedOID(tenant, sub string) string {
	h := sha256.Sum256([]byte(tenant + "\x00" + sub))
	h[6] = h[6]&0x0f | 0x40 // version 4 shape
	h[8] = h[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
