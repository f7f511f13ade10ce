package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/tests/devkeys"
)

func TestTokenPassesAuthFromDevEnv(t *testing.T) {
	t.Parallel()
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
	tests := []struct {
		name      string
		args      []string
		tenant    string
		roles     []string
		forbidden string
	}{
		{"defaults", nil, devkeys.DevTenantID, []string{auth.RoleInitiator}, auth.RoleAdmin},
		{"tenant and roles", []string{"--tenant", "t-42", "--roles", "Dispatch.Approver, Service.Admin", "--ttl", "5m"},
			"t-42", []string{auth.RoleDispatchApprover, auth.RoleAdmin}, auth.RoleInitiator},
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
