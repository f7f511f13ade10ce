// Command devstore reaches the local storage of `make run` (Azurite, through
// STORAGE_CONNECTION_STRING in <dir>/dev.env) for the steps of the README's walk-through that
// are storage, not API:
//
//	go run ./devtools/cmd/devstore put FILE.pdf          upload into documents/<dev tenant>/; prints pdfBlobPath and pdfHash (JSON)
//	go run ./devtools/cmd/devstore put-template DIR NAME upload a template package folder as templates/<dev tenant>/NAME/; prints templatePath
//	go run ./devtools/cmd/devstore get CONTAINER/NAME    write a blob to stdout (the sealed PDF: signed/...)
//	go run ./devtools/cmd/devstore outbox [--to ADDR]    the e-mails and SMS the outbox provider "sent", one JSON line each
//
// --dir (before the verb) names the folder devsetup wrote (default .local).
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/esign-svc/esign/devtools/devkeys"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/google/uuid"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "devstore:", err)
		os.Exit(1)
	}
}

const usage = "usage: devstore [--dir .local] put FILE | put-template DIR NAME | get CONTAINER/NAME | outbox [--to ADDR]"

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("devstore", flag.ContinueOnError)
	dir := fs.String("dir", ".local", "directory devsetup wrote")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New(usage)
	}
	env, err := devkeys.ReadEnv(filepath.Join(*dir, "dev.env"))
	if err != nil {
		return err
	}
	acct, err := azconn.New(azconn.Config{ConnectionString: env["STORAGE_CONNECTION_STRING"]})
	if err != nil {
		return err
	}
	verb, rest := fs.Arg(0), fs.Args()[1:]
	switch {
	case verb == "put" && len(rest) == 1:
		return put(ctx, blobstore.New(acct), rest[0], out)
	case verb == "put-template" && len(rest) == 2:
		return putTemplate(ctx, blobstore.New(acct), rest[0], rest[1], out)
	case verb == "get" && len(rest) == 1:
		return get(ctx, blobstore.New(acct), rest[0], out)
	case verb == "outbox":
		return listOutbox(ctx, acct, rest, out)
	}
	return errors.New(usage)
}

// put uploads file as documents/<dev tenant>/dev/<uuid>-<base name> (a request names only its
// own tenant's folder, and make token's default tenant is devkeys.DevTenantID) and prints the
// create fields for it.
func put(ctx context.Context, st *blobstore.Store, file string, out io.Writer) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := st.EnsureContainer(ctx, "documents"); err != nil {
		return err
	}
	name := devkeys.DevTenantID + "/dev/" + uuid.NewString()[:8] + "-" + filepath.Base(file)
	if _, err := st.Put(ctx, "documents", name, bytes.NewReader(b), "application/pdf", nil); err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	return json.NewEncoder(out).Encode(map[string]string{
		"pdfBlobPath": "documents/" + name, "pdfHash": "sha256:" + hex.EncodeToString(sum[:])})
}

// putTemplate uploads the files of a template package folder (template.yaml, template.pdf,
// schema.yaml when present) as the blob folder templates/<dev tenant>/<name>/ (a request names
// only its own tenant's packages, or the operator's templates/shared/) and prints its templatePath.
func putTemplate(ctx context.Context, st *blobstore.Store, dir, name string, out io.Writer) error {
	if err := st.EnsureContainer(ctx, "templates"); err != nil {
		return err
	}
	name = devkeys.DevTenantID + "/" + strings.Trim(name, "/")
	for _, f := range []string{"template.yaml", "template.pdf", "schema.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if errors.Is(err, os.ErrNotExist) && f == "schema.yaml" {
			continue
		}
		if err != nil {
			return err
		}
		if _, err := st.Put(ctx, "templates", name+"/"+f, bytes.NewReader(b), "application/octet-stream", nil); err != nil {
			return err
		}
	}
	return json.NewEncoder(out).Encode(map[string]string{"templatePath": "templates/" + name + "/"})
}

func get(ctx context.Context, st *blobstore.Store, path string, out io.Writer) error {
	container, name, ok := strings.Cut(path, "/")
	if !ok || container == "" || name == "" {
		return fmt.Errorf("get %q: want CONTAINER/NAME", path)
	}
	rc, _, err := st.Open(ctx, container, name)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(out, rc)
	return err
}

func listOutbox(ctx context.Context, acct *azconn.Account, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("outbox", flag.ContinueOnError)
	to := fs.String("to", "", "only messages to this recipient")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New(usage)
	}
	ob, err := outbox.New(acct, "")
	if err != nil {
		return err
	}
	rows, err := ob.List(ctx)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	for _, r := range rows {
		if *to != "" && r.Recipient != *to {
			continue
		}
		if err := enc.Encode(map[string]any{"sentAt": r.SentAt, "channel": r.Channel, "kind": r.Kind,
			"to": r.Recipient, "subject": r.Subject, "correlationId": r.CorrelationID, "text": r.Text}); err != nil {
			return err
		}
	}
	return nil
}
