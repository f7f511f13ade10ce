package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/esign-svc/esign/connector/client"
)

// sub runs a subcommand of group from table.
func sub(ctx context.Context, a *app, group string, args []string, table map[string]command) error {
	if len(args) == 0 {
		return usagef("%s: want one of %s", group, names(table))
	}
	c, ok := table[args[0]]
	if !ok {
		return usagef("%s: unknown subcommand %q (want one of %s)", group, args[0], names(table))
	}
	a.name = group + " " + args[0]
	return c(ctx, a, args[1:])
}

func names(table map[string]command) string {
	var out []string
	for k := range table {
		out = append(out, k)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

func cmdBatch(ctx context.Context, a *app, args []string) error {
	return sub(ctx, a, "batch", args, map[string]command{
		"list": batchList, "show": batchShow, "decide": batchDecide, "cancel": batchCancel, "receipt": batchReceipt,
	})
}

func batchList(ctx context.Context, a *app, args []string) error {
	fs := a.flags("batch list")
	state := fs.String("state", "", "only batches in this state")
	_, cl, err := a.withClient(fs, args, 0, "no arguments")
	if err != nil {
		return err
	}
	total, list, err := cl.ListBatches(ctx, *state)
	if err != nil {
		return err
	}
	out := struct {
		Total   int                   `json:"total"`
		Batches []client.BatchSummary `json:"batches"`
	}{total, list}
	return a.emit(out, func(w io.Writer) {
		for _, b := range list {
			fmt.Fprintf(w, "%s %-17s %-8s %4d records  %s\n", b.BatchID, b.State, b.DispatchReadiness, b.DocumentCount, b.Title)
		}
		fmt.Fprintf(w, "%d batches\n", total)
	})
}

func batchShow(ctx context.Context, a *app, args []string) error {
	fs := a.flags("batch show")
	withRecords := fs.Bool("records", false, "also list the records (every page)")
	wait := fs.Bool("wait", false, "poll (with a progress bar) until the batch has ended: completed, partially-failed, rejected, cancelled or invalid")
	timeout := fs.Duration("timeout", 30*time.Minute, "how long --wait waits")
	pos, cl, err := a.withClient(fs, args, 1, "one BATCH_ID")
	if err != nil {
		return err
	}
	b, err := cl.GetBatch(ctx, pos[0])
	if err != nil {
		return err
	}
	if *wait {
		if b, err = a.waitBatch(ctx, cl, b, *timeout); err != nil {
			return err
		}
	}
	var recs []client.BatchRecord
	if *withRecords {
		token := ""
		for {
			page, err := cl.BatchRecords(ctx, pos[0], "", 1000, token)
			if err != nil {
				return err
			}
			recs = append(recs, page.Records...)
			if token = page.ContinuationToken; token == "" {
				break
			}
		}
	}
	out := struct {
		*client.Batch
		Records []client.BatchRecord `json:"records,omitempty"`
	}{b, recs}
	return a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "batchId:   %s\ntitle:     %s\nstate:     %s\nreadiness: %s\ntemplate:  %s v%d\nrecords:   %d (%d ready, %d invalid), %d processed, %d failed\n",
			b.BatchID, b.Title, b.State, b.DispatchReadiness, b.TemplatePath, b.TemplateVersion, b.DocumentCount, b.ReadyCount,
			b.FailedCount, b.ProcessedCount, b.ErrorCount)
		if b.DecisionComments != "" {
			fmt.Fprintf(w, "comments:  %s\n", b.DecisionComments)
		}
		for _, r := range recs {
			fmt.Fprintf(w, "  %4d %-14s %-10s %s %s\n", r.Index, r.Status, r.State, r.PDFBlobPath, r.Error)
		}
	})
}

// batchEnded are the states a batch does not leave.
var batchEnded = map[string]bool{"completed": true, "partially-failed": true, "rejected": true, "cancelled": true, "invalid": true}

// waitBatch polls a batch every second until it has ended, drawing its processed records.
func (a *app) waitBatch(ctx context.Context, cl *client.Client, b *client.Batch, timeout time.Duration) (*client.Batch, error) {
	p := a.progress("processed", b.ReadyCount)
	defer p.finish()
	deadline := time.Now().Add(timeout)
	for {
		p.set(b.ProcessedCount)
		if batchEnded[b.State] {
			return b, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("--wait: batch %s is still %s after --timeout %s", b.BatchID, b.State, timeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
		var err error
		if b, err = cl.GetBatch(ctx, b.BatchID); err != nil {
			return nil, err
		}
	}
}

func batchDecide(ctx context.Context, a *app, args []string) error {
	fs := a.flags("batch decide")
	decision := fs.String("decision", "", "approve, reject or request-changes")
	comments := fs.String("comments", "", "the decision's comments")
	pos, err := a.parse(fs, args, 1, "one BATCH_ID")
	if err != nil {
		return err
	}
	switch *decision {
	case "approve", "reject", "request-changes":
	default:
		return usagef("--decision must be approve, reject or request-changes, not %q", *decision)
	}
	cl, err := a.client()
	if err != nil {
		return err
	}
	d, err := cl.DecideBatch(ctx, pos[0], *decision, *comments)
	if err != nil {
		return err
	}
	return a.emit(d, func(w io.Writer) { fmt.Fprintf(w, "batch %s %s at %s\n", d.BatchID, d.State, d.DecidedAt) })
}

func batchCancel(ctx context.Context, a *app, args []string) error {
	fs := a.flags("batch cancel")
	pos, cl, err := a.withClient(fs, args, 1, "one BATCH_ID")
	if err != nil {
		return err
	}
	state, err := cl.CancelBatch(ctx, pos[0])
	if err != nil {
		return err
	}
	out := map[string]string{"batchId": pos[0], "state": state}
	return a.emit(out, func(w io.Writer) { fmt.Fprintf(w, "batch %s %s\n", pos[0], state) })
}

func batchReceipt(ctx context.Context, a *app, args []string) error {
	fs := a.flags("batch receipt")
	outPath := fs.String("out", "", "write the receipt PDF here (required)")
	pos, err := a.parse(fs, args, 1, "one BATCH_ID")
	if err != nil {
		return err
	}
	if *outPath == "" {
		return usagef("batch receipt: --out FILE.pdf is required")
	}
	cl, err := a.client()
	if err != nil {
		return err
	}
	pdf, err := cl.BatchReceiptPDF(ctx, pos[0])
	if err != nil {
		return err
	}
	if err := os.WriteFile(*outPath, pdf, 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	out := map[string]any{"batchId": pos[0], "file": *outPath, "size": len(pdf)}
	return a.emit(out, func(w io.Writer) { fmt.Fprintf(w, "wrote %s (%d bytes)\n", *outPath, len(pdf)) })
}

func cmdWorkflow(ctx context.Context, a *app, args []string) error {
	return sub(ctx, a, "workflow", args, map[string]command{
		"create": workflowCreate, "status": workflowStatus, "export": workflowExport,
	})
}

func workflowCreate(ctx context.Context, a *app, args []string) error {
	fs := a.flags("workflow create")
	template := fs.String("template", "", "the package with its schema.yaml (required)")
	corr := fs.String("correlation-id", "", "the workflow's correlationId (the same one again answers the existing workflow; without it the service generates one and the create is sent once, never retried)")
	docID := fs.String("document-id", "", "options.documentId: the sealed record's document id (default the workflow id)")
	docType := fs.String("doc-type", "", "options.docType: the sealed record's document type (default workflow)")
	data := fs.String("data", "", "initialData as a JSON object file")
	settingsFile := fs.String("settings", "", "templateSettings as a JSON file (workflow block: recipients, requireOtp, ...)")
	var recipients listFlag
	fs.Var(&recipients, "recipient", "email[:display name] of the participant to invite (repeatable; sets templateSettings.workflow.recipients)")
	callback := fs.String("callback-url", "", "https URL called when the workflow ends")
	if _, err := a.parse(fs, args, 0, "flags only"); err != nil {
		return err
	}
	if *template == "" {
		return usagef("workflow create: --template is required")
	}
	req := client.CreateWorkflowRequest{TemplatePath: *template, CorrelationID: *corr, CallbackURL: *callback}
	if *docID != "" || *docType != "" {
		req.Options = &client.WorkflowOptions{DocumentID: *docID, DocType: *docType}
	}
	if *data != "" {
		b, err := readFile("--data", *data)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &req.InitialData); err != nil {
			return usagef("--data: must be a JSON object")
		}
	}
	ts := map[string]any{}
	if *settingsFile != "" {
		b, err := readFile("--settings", *settingsFile)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &ts); err != nil {
			return usagef("--settings: must be a JSON object")
		}
	}
	if len(recipients) > 0 {
		wf, _ := ts["workflow"].(map[string]any)
		if wf == nil {
			wf = map[string]any{}
		}
		var list []map[string]string
		for _, r := range recipients {
			email, name, _ := strings.Cut(r, ":")
			m := map[string]string{"email": email}
			if name != "" {
				m["displayName"] = name
			}
			list = append(list, m)
		}
		wf["recipients"] = list
		ts["workflow"] = wf
	}
	if len(ts) > 0 {
		req.TemplateSettings, _ = json.Marshal(ts)
	}
	cl, err := a.client()
	if err != nil {
		return err
	}
	wf, err := cl.CreateWorkflow(ctx, req)
	if err != nil {
		return err
	}
	return a.emit(wf, func(w io.Writer) {
		again := ""
		if wf.Idempotent {
			again = " (existing: the correlationId was used before)"
		}
		fmt.Fprintf(w, "workflowId:    %s%s\ncorrelationId: %s\nstate:         %s\n", wf.WorkflowID, again, wf.CorrelationID, wf.State)
		if link := a.portalLink(wf.PortalURL, "pt", "workflow", wf.WorkflowID); link != "" {
			fmt.Fprintf(w, "portal:        %s\n", link)
		}
	})
}

func workflowStatus(ctx context.Context, a *app, args []string) error {
	fs := a.flags("workflow status")
	pos, cl, err := a.withClient(fs, args, 1, "one WORKFLOW_ID")
	if err != nil {
		return err
	}
	s, err := cl.WorkflowStatus(ctx, pos[0])
	if err != nil {
		return err
	}
	return a.emit(s, func(w io.Writer) {
		fmt.Fprintf(w, "workflowId: %s\nstate:      %s\nstep:       %d of %d\napproval:   stage %d of %d\n",
			s.WorkflowID, s.State, s.CurrentStepIndex+1, s.TotalSteps, s.CurrentApprovalStage, s.TotalApprovalStages)
		if s.ValidationOutcome != "" {
			fmt.Fprintf(w, "validation: %s\n", s.ValidationOutcome)
		}
		if s.SealedPDFPath != "" {
			fmt.Fprintf(w, "sealed:     %s (%s)\n", s.SealedPDFPath, s.SealedPDFHash)
		}
		switch {
		case s.ESignGroupID != "":
			fmt.Fprintf(w, "esign:      group %s\n", s.ESignGroupID)
		case len(s.DeliveryIDs) > 0:
			fmt.Fprintf(w, "delivery:   %s\n", strings.Join(s.DeliveryIDs, ", "))
		case s.AutoTriggerFailed != "":
			fmt.Fprintf(w, "auto-trigger failed: %s\n", s.AutoTriggerFailed)
		}
	})
}

func workflowExport(ctx context.Context, a *app, args []string) error {
	fs := a.flags("workflow export")
	format := fs.String("format", "json", "json or csv")
	outPath := fs.String("out", "", "write to this file instead of stdout")
	pos, cl, err := a.withClient(fs, args, 1, "one WORKFLOW_ID")
	if err != nil {
		return err
	}
	var body []byte
	switch *format {
	case "csv":
		body, err = cl.WorkflowExportCSV(ctx, pos[0])
	case "json":
		var e *client.WorkflowExport
		if e, err = cl.WorkflowExportJSON(ctx, pos[0]); err == nil {
			body, err = json.MarshalIndent(e, "", "  ")
			body = append(body, '\n')
		}
	default:
		return usagef("--format must be json or csv, not %q", *format)
	}
	if err != nil {
		return err
	}
	if *outPath != "" {
		if err := os.WriteFile(*outPath, body, 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		return nil
	}
	_, err = a.env.Stdout.Write(body)
	return err
}
