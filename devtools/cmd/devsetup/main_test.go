package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/esign-svc/esign/devtools/devkeys"
)

func TestRunTwiceKeepsKeys(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".local")
	var out bytes.Buffer
	if err := run([]string{"--dir", dir, "--portal-url", "http://127.0.0.1:5173/"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "created under") {
		t.Fatalf("output %q", out.String())
	}
	env1, err := devkeys.ReadEnv(filepath.Join(dir, "dev.env"))
	if err != nil {
		t.Fatal(err)
	}
	if env1["PORTAL_URL"] != "http://127.0.0.1:5173/" || env1["PORTAL_ORIGIN"] != "http://127.0.0.1:5173" {
		t.Fatalf("portal settings %q %q", env1["PORTAL_URL"], env1["PORTAL_ORIGIN"])
	}
	for _, v := range env1 {
		if len(v) > 20 && strings.Contains(out.String(), v) && !strings.Contains(v, "/") {
			t.Fatal("a secret was printed")
		}
	}
	out.Reset()
	if err := run([]string{"--dir", dir}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "all keys present") {
		t.Fatalf("second run output %q", out.String())
	}
	env2, _ := devkeys.ReadEnv(filepath.Join(dir, "dev.env"))
	for _, k := range []string{"TOKEN_KEYS", "PII_HASH_KEY", "PII_ENC_KEYS", "PORTAL_CALLBACK_SECRETS", "HOST_KEY",
		"MASTER_KEY", "LICENCE_PUBLIC_KEY"} {
		if env1[k] != env2[k] {
			t.Errorf("%s changed between runs", k)
		}
	}
	if env2["PORTAL_URL"] != "http://127.0.0.1:7071/portal" {
		t.Errorf("PORTAL_URL default = %q", env2["PORTAL_URL"])
	}
	if _, err := os.Stat(env2["AUTH_JWKS_FILE"]); err != nil {
		t.Error(err)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--nope"}, {"--dir", t.TempDir(), "--portal-url", "ftp://x"}, {"extra"}} {
		if err := run(args, &bytes.Buffer{}); err == nil {
			t.Errorf("run(%v) succeeded", args)
		}
	}
}
