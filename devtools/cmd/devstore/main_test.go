package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/esign-svc/esign/devtools/devkeys"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
)

// put, get and outbox against a real Azurite, through a dev.env as make run writes it.
func TestPutGetOutbox(t *testing.T) {
	t.Parallel()
	az := azuritetest.Start(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dev.env"), devkeys.FormatEnv(map[string]string{
		"STORAGE_CONNECTION_STRING": az.ConnectionString()}), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pdf := filepath.Join(dir, "doc.pdf")
	if err := os.WriteFile(pdf, []byte("%PDF-1.7 test"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"--dir", dir, "put", pdf}, &out); err != nil {
		t.Fatal(err)
	}
	var created map[string]string
	if err := json.Unmarshal(out.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	// sha256 of "%PDF-1.7 test"
	if !strings.HasPrefix(created["pdfBlobPath"], "documents/"+devkeys.DevTenantID+"/dev/") || !strings.HasSuffix(created["pdfBlobPath"], "-doc.pdf") ||
		created["pdfHash"] != "sha256:eddc31937fbdaf708e866af0d20b9fb8c79dd001881c8a11e4c617f2882e779f" {
		t.Errorf("put printed %v", created)
	}
	out.Reset()
	if err := run(ctx, []string{"--dir", dir, "get", created["pdfBlobPath"]}, &out); err != nil || out.String() != "%PDF-1.7 test" {
		t.Errorf("get: %v %q", err, out.String())
	}

	acct, err := azconn.New(azconn.Config{ConnectionString: az.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.New(acct, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := ob.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"a@example.test", "b@example.test"} {
		if err := ob.Send(ctx, notify.Message{Channel: notify.Email, Kind: notify.KindInvitation, To: to, Subject: "s " + to, Text: "t", CorrelationID: "C-1"}); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	if err := run(ctx, []string{"--dir", dir, "outbox", "--to", "b@example.test"}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var row map[string]any
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &row) != nil || row["to"] != "b@example.test" ||
		row["kind"] != "invitation" || row["subject"] != "s b@example.test" || row["correlationId"] != "C-1" {
		t.Errorf("outbox --to printed %q", out.String())
	}

	for name, args := range map[string][]string{"no verb": nil, "bad get": {"get", "nocontainer"},
		"extra": {"put", "a", "b"}, "unknown": {"list"}} {
		if err := run(ctx, append([]string{"--dir", dir}, args...), &bytes.Buffer{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
