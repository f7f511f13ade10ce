package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/esign-svc/esign/devtools/devkeys"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
)

// devSetup makes a dev setup in a temporary folder and the verifier the dispatcher would build
// from its dev.env.
func devSetup(t *testing.T) (string, *auth.Verifier) {
	t.Helper()
	dir := t.TempDir()
	if _, err := devkeys.Setup(dir, devkeys.Options{}); err != nil {
		t.Fatal(err)
	}
	env, err := devkeys.ReadEnv(filepath.Join(dir, "dev.env"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewVerifier(auth.Config{Issuer: env["AUTH_ISSUER"], Audience: env["AUTH_AUDIENCE"], JWKSFile: env["AUTH_JWKS_FILE"]})
	if err != nil {
		t.Fatal(err)
	}
	return dir, v
}

func TestTokenPassesAuthFromDevEnv(t *testing.T) {
	t.Parallel()
	dir, v := devSetup(t)
	tests := []struct {
		name      string
		args      []string
		tenant    string
		roles     []string
		forbidden string
	}{
		{"defaults", nil, devkeys.DevTenantID, []string{auth.RoleInitiator}, auth.RoleAdmin},
		{"tenant and roles", []string{"--tenant", "42424242-4242-4242-8242-424242424242", "--roles", "Dispatch.Approver, Service.Admin", "--ttl", "5m"},
			"42424242-4242-4242-8242-424242424242", []string{auth.RoleDispatchApprover, auth.RoleAdmin}, auth.RoleInitiator},
		{"no roles", []string{"--roles", ""}, devkeys.DevTenantID, nil, auth.RoleInitiator},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			if err := run(append([]string{"--dir", dir}, tc.args...), &out); err != nil {
				t.Fatal(err)
			}
			p, err := v.Verify(context.Background(), strings.TrimSpace(out.String()))
			if err != nil {
				t.Fatal(err)
			}
			if p.TenantID != tc.tenant || len(p.Roles) != len(tc.roles) {
				t.Fatalf("principal %+v", p)
			}
			for _, r := range tc.roles {
				if !p.HasRole(r) {
					t.Errorf("missing role %s", r)
				}
			}
			if e, ok := apperr.As(auth.Require(p, tc.forbidden)); !ok || e.Kind != apperr.KindForbidden {
				t.Errorf("Require(%s) = %v", tc.forbidden, e)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	cases := map[string][]string{
		"no dev.env": {"--dir", empty},
		"bad ttl":    {"--dir", empty, "--ttl", "-1h"},
		"no tenant":  {"--dir", empty, "--tenant", " "},
		"extra arg":  {"--dir", empty, "x"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err := run(args, &bytes.Buffer{}); err == nil {
				t.Fatal("succeeded")
			}
		})
	}
}

// Two subs of one tenant are two people (Principal.CallerID differs), the same sub is the same
// person on every mint, and --oid sets the identity outright.
func TestSubAndOIDPlayTwoPeople(t *testing.T) {
	t.Parallel()
	dir, v := devSetup(t)
	principal := func(args ...string) auth.Principal {
		t.Helper()
		var out bytes.Buffer
		if err := run(append([]string{"--dir", dir, "--tenant", "10101010-1010-4010-8010-101010101010"}, args...), &out); err != nil {
			t.Fatal(err)
		}
		p, err := v.Verify(context.Background(), strings.TrimSpace(out.String()))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	alice, alice2, bob := principal("--sub", "alice"), principal("--sub", "alice"), principal("--sub", "bob")
	dev := principal()
	if alice.Subject != "alice" || bob.Subject != "bob" {
		t.Fatalf("subjects %q %q", alice.Subject, bob.Subject)
	}
	if alice.CallerID() == bob.CallerID() || alice.CallerID() == dev.CallerID() || bob.CallerID() == dev.CallerID() {
		t.Errorf("not distinct people: alice %q bob %q dev %q", alice.CallerID(), bob.CallerID(), dev.CallerID())
	}
	if alice.Email != "alice@dev.example.test" || bob.Email != "bob@dev.example.test" {
		t.Errorf("addresses (preferred_username): alice %q bob %q", alice.Email, bob.Email)
	}
	if alice.CallerID() != alice2.CallerID() {
		t.Errorf("alice is two people: %q, %q", alice.CallerID(), alice2.CallerID())
	}
	if p := principal("--sub", "alice", "--oid", "11111111-0000-4000-8000-000000000001"); p.ObjectID != "11111111-0000-4000-8000-000000000001" || p.CallerID() != p.ObjectID {
		t.Errorf("--oid: %+v", p)
	}
	if p := principal("--oid", "oid-carol"); p.ObjectID != "oid-carol" {
		t.Errorf("--oid alone: %+v", p)
	}
}
