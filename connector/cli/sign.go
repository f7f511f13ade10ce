package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/connector/client"
	"github.com/esign-svc/esign/connector/jobs"
)

// listFlag is a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// upload stores a local PDF and logs it in the upload log.
func (a *app) upload(ctx context.Context, path string) (*client.Upload, error) {
	pdf, err := readFile("FILE", path)
	if err != nil {
		return nil, err
	}
	cl, err := a.client()
	if err != nil {
		return nil, err
	}
	u, err := cl.UploadDocument(ctx, bytes.NewReader(pdf))
	if err != nil {
		return nil, err
	}
	st, err := a.jobStore(ctx)
	if err != nil {
		return nil, err
	}
	if err := st.LogUpload(ctx, jobs.Upload{File: filepath.Base(path), PDFBlobPath: u.PDFBlobPath, PDFHash: u.PDFHash,
		Size: u.Size, Pages: u.Pages}); err != nil {
		return nil, fmt.Errorf("upload log: %w", err)
	}
	return u, nil
}

func cmdUpload(ctx context.Context, a *app, args []string) error {
	fs := a.flags("upload")
	pos, err := a.parse(fs, args, 1, "one FILE.pdf")
	if err != nil {
		return err
	}
	u, err := a.upload(ctx, pos[0])
	if err != nil {
		return err
	}
	return a.emit(u, func(w io.Writer) {
		fmt.Fprintf(w, "pdfBlobPath: %s\npdfHash:     %s\npages:       %d\nsize:        %d bytes\n", u.PDFBlobPath, u.PDFHash, u.Pages, u.Size)
	})
}

// parseParty reads role:email[:name] (signers) or email[:name] (recipients).
func parseSigner(i int, v string) (client.Signer, error) {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) < 2 || parts[0] == "" || !strings.Contains(parts[1], "@") {
		return client.Signer{}, usagef("--signer %q: want role:email[:name]", v)
	}
	s := client.Signer{SlotIndex: i, Role: parts[0], Email: parts[1]}
	if len(parts) == 3 {
		s.NamePrefill = parts[2]
	}
	return s, nil
}

func cmdSign(ctx context.Context, a *app, args []string) error {
	fs := a.flags("sign")
	var signers listFlag
	fs.Var(&signers, "signer", "role:email[:name], once per signer in slot order (at least one)")
	mode := fs.String("mode", "", "single, sequential or parallel (default: single for one signer, else parallel)")
	corr := fs.String("correlation-id", "", "the session's correlationId (default: svcconnect-<uuid>)")
	docID := fs.String("document-id", "", "the name signers see (default: the file's name)")
	docType := fs.String("doc-type", "document", "the document's type")
	template := fs.String("template", "", "a template package to take the field manifest from")
	expires := fs.Int("expires-in-minutes", 0, "the session's lifetime (default: the service's)")
	org := fs.String("organization", "", "the organisation named to signers")
	reqEmail := fs.String("requested-by-email", "", "the requester's address (gates the requester's notices)")
	pos, err := a.parse(fs, args, 1, "one FILE.pdf")
	if err != nil {
		return err
	}
	if len(signers) == 0 {
		return usagef("sign: at least one --signer role:email[:name]")
	}
	req := client.CreateSessionRequest{CorrelationID: *corr, DocumentID: *docID, DocType: *docType, SigningMode: *mode,
		TemplatePath: *template, ExpiresInMinutes: *expires, OrganizationName: *org, RequestedByEmail: *reqEmail}
	for i, v := range signers {
		s, err := parseSigner(i, v)
		if err != nil {
			return err
		}
		req.Signers = append(req.Signers, s)
	}
	if req.CorrelationID == "" {
		req.CorrelationID = "svcconnect-" + uuid.NewString()
	}
	if req.DocumentID == "" {
		req.DocumentID = filepath.Base(pos[0])
	}
	if req.SigningMode == "" {
		req.SigningMode = "parallel"
		if len(req.Signers) == 1 {
			req.SigningMode = "single"
		}
	}
	u, err := a.upload(ctx, pos[0])
	if err != nil {
		return err
	}
	req.PDFBlobPath, req.PDFHash = u.PDFBlobPath, u.PDFHash
	cl, _ := a.client()
	s, err := cl.CreateSession(ctx, req)
	if err != nil {
		return err
	}
	out := struct {
		Upload  *client.Upload  `json:"upload"`
		Session *client.Session `json:"session"`
	}{u, s}
	return a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "uploaded:      %s (%d pages)\ncorrelationId: %s\ngroupId:       %s\nstate:         %s\nexpiresAt:     %s\n",
			u.PDFBlobPath, u.Pages, s.CorrelationID, s.GroupID, s.State, s.ExpiresAt)
		for _, sl := range s.Slots {
			fmt.Fprintf(w, "slot %d: invitation queued (session %s)\n", sl.SlotIndex, sl.SessionID)
			if link := a.portalLink(sl.PortalURL, "token", "sign"); link != "" {
				fmt.Fprintf(w, "  portal: %s\n", link)
			}
		}
		fmt.Fprintf(w, "follow it with: svcconnect status %s\n", s.CorrelationID)
	})
}

func cmdStatus(ctx context.Context, a *app, args []string) error {
	fs := a.flags("status")
	wait := fs.String("wait", "", "poll until the session is in this state (e.g. complete)")
	timeout := fs.Duration("timeout", 5*time.Minute, "how long --wait waits")
	pos, cl, err := a.withClient(fs, args, 1, "one CORRELATION_ID")
	if err != nil {
		return err
	}
	deadline := time.Now().Add(*timeout)
	last := ""
	var st *client.SessionStatus
	for {
		if st, err = cl.SessionStatus(ctx, pos[0]); err != nil {
			return err
		}
		if *wait == "" || st.State == *wait {
			break
		}
		if st.State != last && a.env.ProgressTTY {
			fmt.Fprintf(a.env.Stderr, "state %s, waiting for %s\n", st.State, *wait)
		}
		last = st.State
		if time.Now().After(deadline) {
			return fmt.Errorf("--wait %s: the session is still %s after --timeout %s", *wait, st.State, *timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return a.emit(st, func(w io.Writer) {
		fmt.Fprintf(w, "correlationId: %s\ngroupId:       %s\ndocument:      %s\nstate:         %s\n", st.CorrelationID, st.GroupID, st.DocumentID, st.State)
		if st.CancelReason != "" {
			fmt.Fprintf(w, "cancelReason:  %s\n", st.CancelReason)
		}
		if st.SignedDocumentPath != "" {
			fmt.Fprintf(w, "signed:        %s\ncertificate:   %s\n", st.SignedDocumentPath, st.CertificatePath)
		}
		if st.SealError != "" {
			fmt.Fprintf(w, "sealError:     %s\n", st.SealError)
		}
		for _, sl := range st.Slots {
			fmt.Fprintf(w, "slot %d %-10s %s\n", sl.SlotIndex, sl.Role, sl.State)
		}
		for _, e := range st.Events {
			fmt.Fprintf(w, "  %s %s\n", e.At, e.Kind)
		}
	})
}

func cmdDeliver(ctx context.Context, a *app, args []string) error {
	fs := a.flags("deliver")
	var to listFlag
	fs.Var(&to, "to", "email[:name], once per recipient (1 to 20)")
	blob := fs.String("blob", "", "a document already stored (pdfBlobPath) instead of FILE.pdf")
	name := fs.String("name", "", "the document's name (default: the file's name)")
	mode := fs.String("mode", "secure-email", "secure-email, sharepoint or both")
	corr := fs.String("correlation-id", "", "the delivery's correlationId (default: svcconnect-<uuid>)")
	otp := fs.Bool("require-otp", false, "recipients enter an e-mailed code first")
	hours := fs.Int("expires-in-hours", 0, "the links' lifetime (default: the service's, 168)")
	msg := fs.String("message", "", "a message shown to recipients")
	org := fs.String("requester-org", "", "the sending organisation")
	pos, err := a.parse(fs, args, -1, "")
	if err != nil {
		return err
	}
	if (len(pos) == 1) == (*blob != "") || len(pos) > 1 {
		return usagef("deliver: give one FILE.pdf or --blob PATH")
	}
	if len(to) == 0 {
		return usagef("deliver: at least one --to email[:name]")
	}
	req := client.CreateDeliveryRequest{CorrelationID: *corr, DocumentName: *name, PDFBlobPath: *blob, Mode: *mode,
		RequireOTP: *otp, ExpiresInHours: *hours, Message: *msg, RequesterOrg: *org}
	for _, v := range to {
		email, n, _ := strings.Cut(v, ":")
		if !strings.Contains(email, "@") {
			return usagef("--to %q: want email[:name]", v)
		}
		req.Recipients = append(req.Recipients, client.Recipient{Email: email, Name: n})
	}
	if req.CorrelationID == "" {
		req.CorrelationID = "svcconnect-" + uuid.NewString()
	}
	if len(pos) == 1 {
		u, err := a.upload(ctx, pos[0])
		if err != nil {
			return err
		}
		req.PDFBlobPath = u.PDFBlobPath
		if req.DocumentName == "" {
			req.DocumentName = filepath.Base(pos[0])
		}
	}
	if req.DocumentName == "" {
		req.DocumentName = filepath.Base(req.PDFBlobPath)
	}
	cl, err := a.client()
	if err != nil {
		return err
	}
	d, err := cl.CreateDelivery(ctx, req, "")
	if err != nil {
		return err
	}
	return a.emit(d, func(w io.Writer) {
		fmt.Fprintf(w, "correlationId: %s\nexpiresAt:     %s\n", d.CorrelationID, d.ExpiresAt)
		for _, s := range d.Sessions {
			fmt.Fprintf(w, "delivery %s: link sent\n", s.DeliveryID)
			if link := a.portalLink(s.PortalURL, "t", "deliver", s.DeliveryID); link != "" {
				fmt.Fprintf(w, "  portal: %s\n", link)
			}
		}
	})
}
