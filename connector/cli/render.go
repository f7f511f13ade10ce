package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/connector/client"
	"github.com/esign-svc/esign/connector/jobs"
	"github.com/esign-svc/esign/connector/records"
	"github.com/esign-svc/esign/connector/settings"
	"github.com/esign-svc/esign/connector/worker"
)

// Profiles.
const (
	ProfileCRM = "crm"
	ProfileERP = "erp"
)

// ERP modes.
const (
	ModeNow        = "now"
	ModeBackground = "background"
	ModeSchedule   = "schedule"
)

type renderFlags struct {
	template, data, profile, corr, settingsFile, textCols string
	generatedBy, sourceSystem, mode, at                   string
	approvers                                             listFlag
	approval, yes                                         bool
	maxRetries                                            int
}

func cmdRender(ctx context.Context, a *app, args []string) error {
	fs := a.flags("render")
	var f renderFlags
	fs.StringVar(&f.template, "template", "", "the template package (templates/<name>.zip or templates/<folder>/)")
	fs.StringVar(&f.data, "data", "", "the records: FILE.json (an object: one record; an array: a batch), FILE.csv or FILE.xlsx")
	fs.StringVar(&f.profile, "profile", ProfileCRM, "crm (a governed batch, thresholds service_batch*threshold) or erp (the generation queue)")
	fs.StringVar(&f.corr, "correlation-id", "", "the document's (one record), the batch's (crm) or the rows' prefix (erp)")
	fs.StringVar(&f.settingsFile, "settings", "", "templateSettings as a JSON file (esign, delivery, distribution blocks)")
	fs.StringVar(&f.textCols, "text-columns", "", "CSV/XLSX columns always read as text, comma-separated")
	fs.StringVar(&f.generatedBy, "generated-by", "svcconnect", "recorded with each document")
	fs.StringVar(&f.sourceSystem, "source-system", "", "recorded with each document (default: the profile)")
	fs.BoolVar(&f.approval, "approval", false, "crm: the batch waits for an approver (distribution.requireApproval)")
	fs.Var(&f.approvers, "approver", "crm with --approval: an approver's address to notify (repeatable)")
	fs.BoolVar(&f.yes, "yes", false, "crm: confirm a batch above service_batchwarningthreshold")
	fs.StringVar(&f.mode, "mode", "", "erp: now, background or schedule (asked at a terminal at SERVICE_BATCH_ASYNC_THRESHOLD records)")
	fs.StringVar(&f.at, "at", "", "erp --mode schedule: when, RFC 3339 (2027-01-04T06:00:00Z)")
	fs.IntVar(&f.maxRetries, "max-retries", 0, "erp: attempts of each row before it is dead (default SERVICE_GEN_QUEUE_MAX_RETRIES)")
	if _, err := a.parse(fs, args, 0, "flags only"); err != nil {
		return err
	}
	if f.template == "" || f.data == "" {
		return usagef("render: --template and --data are required")
	}
	if f.profile != ProfileCRM && f.profile != ProfileERP {
		return usagef("--profile must be crm or erp, not %q", f.profile)
	}
	var text []string
	if f.textCols != "" {
		text = strings.Split(f.textCols, ",")
	}
	recs, single, err := records.ReadFile(f.data, records.Options{Text: text})
	if err != nil {
		return fmt.Errorf("--data: %w", err)
	}
	s, err := a.settings()
	if err != nil {
		return err
	}
	req := client.RenderRequest{TemplatePath: f.template, Options: &client.RenderOptions{GeneratedBy: f.generatedBy,
		SourceSystem: f.sourceSystem}}
	if req.Options.SourceSystem == "" {
		req.Options.SourceSystem = f.profile
	}
	if f.settingsFile != "" {
		b, err := readFile("--settings", f.settingsFile)
		if err != nil {
			return err
		}
		if !json.Valid(b) {
			return usagef("--settings: %s is not JSON", f.settingsFile)
		}
		req.TemplateSettings = b
	}
	if single {
		req.Options.CorrelationID = f.corr
		return a.renderOne(ctx, req, recs[0])
	}
	if f.profile == ProfileCRM {
		req.Options.CorrelationID = f.corr
		return a.renderCRM(ctx, s, f, req, recs)
	}
	return a.renderERP(ctx, s, f, req, recs)
}

func (a *app) renderOne(ctx context.Context, req client.RenderRequest, rec records.Record) error {
	cl, err := a.client()
	if err != nil {
		return err
	}
	r, err := cl.Render(ctx, req, rec)
	if err != nil {
		return err
	}
	return a.emit(r, func(w io.Writer) {
		fmt.Fprintf(w, "correlationId: %s\ndocumentId:    %s\npdfBlobPath:   %s\npdfHash:       %s\npages:         %d\n",
			r.CorrelationID, r.DocumentID, r.PDFBlobPath, r.PDFHash, r.Pages)
		for _, wr := range r.Warnings {
			fmt.Fprintf(w, "%s %s: %s\n", wr.Severity, wr.FieldKey, wr.Message)
		}
		if r.Esign != nil {
			fmt.Fprintf(w, "signing session %s (%s)\n", r.Esign.GroupID, r.Esign.State)
		}
		if r.Delivery != nil {
			fmt.Fprintf(w, "%d delivery sessions\n", len(r.Delivery.Sessions))
		}
	})
}

// renderCRM is the CRM profile: at most service_batchwarningthreshold records run at once, up
// to service_batchmaxthreshold need a confirmation, more are refused.
func (a *app) renderCRM(ctx context.Context, s *settings.Settings, f renderFlags, req client.RenderRequest, recs []records.Record) error {
	n := len(recs)
	if n > s.MaxThreshold {
		return fmt.Errorf("%d records: above %s (%d), the CRM profile refuses the batch; split it", n, settings.KeyMaxThreshold, s.MaxThreshold)
	}
	if n > s.WarnThreshold && !f.yes &&
		!a.confirm(fmt.Sprintf("%d records is above %s (%d). Submit the batch?", n, settings.KeyWarnThreshold, s.WarnThreshold)) {
		return fmt.Errorf("%d records: above %s (%d), confirm with --yes (or answer y at a terminal); nothing was submitted",
			n, settings.KeyWarnThreshold, s.WarnThreshold)
	}
	ts := map[string]any{}
	if len(req.TemplateSettings) > 0 {
		if err := json.Unmarshal(req.TemplateSettings, &ts); err != nil {
			return usagef("--settings: must be a JSON object")
		}
	}
	if f.approval {
		dist, _ := ts["distribution"].(map[string]any)
		if dist == nil {
			dist = map[string]any{}
		}
		dist["enabled"], dist["requireApproval"] = true, true
		if len(f.approvers) > 0 {
			dist["approversEmail"] = []string(f.approvers)
		}
		ts["distribution"] = dist
	} else {
		req.Features = map[string]bool{"dispatch": true}
	}
	if len(ts) > 0 {
		req.TemplateSettings, _ = json.Marshal(ts)
	}
	cl, err := a.client()
	if err != nil {
		return err
	}
	list := make([]client.Record, n)
	copy(list, recs)
	rc, err := cl.SubmitBatch(ctx, req, list)
	if err != nil && !client.IsInvalidBatch(err) {
		return err
	}
	if perr := a.emit(rc, func(w io.Writer) {
		fmt.Fprintf(w, "batchId:   %s\nstate:     %s\nreadiness: %s\nrecords:   %d (%d ready, %d invalid, %d with warnings)\n",
			rc.BatchID, rc.State, rc.DispatchReadiness, rc.DocumentCount, rc.ReadyCount, rc.FailedCount, rc.WarningCount)
		for _, v := range rc.ValidationResults {
			if v.Status != "valid" {
				fmt.Fprintf(w, "  record %d %s: %s\n", v.Index, v.Status, strings.Join(v.Messages, "; "))
			}
		}
	}); perr != nil {
		return perr
	}
	return err
}

// renderERP is the ERP profile: the records go to the generation queue; from
// SERVICE_BATCH_ASYNC_THRESHOLD records on the user chooses to run them in the background,
// schedule them or generate them now.
func (a *app) renderERP(ctx context.Context, s *settings.Settings, f renderFlags, req client.RenderRequest, recs []records.Record) error {
	n := len(recs)
	mode := f.mode
	if mode == "" {
		mode = ModeNow
		if n >= s.AsyncThreshold {
			mode = a.ask(fmt.Sprintf("%d records reach %s (%d): run in the background, schedule, or generate now?",
				n, settings.KeyAsyncThreshold, s.AsyncThreshold), ModeBackground, ModeSchedule, ModeNow)
			if mode == "" {
				return usagef("%d records reach %s (%d): choose --mode background, schedule (with --at) or now",
					n, settings.KeyAsyncThreshold, s.AsyncThreshold)
			}
		}
	}
	var runAt time.Time
	switch mode {
	case ModeNow, ModeBackground:
		if f.at != "" {
			return usagef("--at goes with --mode schedule")
		}
	case ModeSchedule:
		t, err := time.Parse(time.RFC3339, f.at)
		if err != nil {
			return usagef("--at: want an RFC 3339 time such as 2027-01-04T06:00:00Z, not %q", f.at)
		}
		runAt = t
	default:
		return usagef("--mode must be now, background or schedule, not %q", mode)
	}
	maxRetries := f.maxRetries
	if maxRetries == 0 {
		maxRetries = s.MaxRetries
	}
	if maxRetries < 1 {
		return usagef("--max-retries must be at least 1")
	}
	prefix := f.corr
	if prefix == "" {
		prefix = "svcconnect-" + uuid.NewString()
	}
	body, _ := json.Marshal(worker.Request{Render: req, CorrelationPrefix: prefix})
	raws := make([]json.RawMessage, n)
	for i, r := range recs {
		raws[i], _ = json.Marshal(r)
	}
	st, err := a.jobStore(ctx)
	if err != nil {
		return err
	}
	id, err := st.Add(ctx, jobs.NewJob{Profile: ProfileERP, TemplatePath: req.TemplatePath, Request: body, Records: raws,
		MaxRetries: maxRetries, RunAt: runAt})
	if err != nil {
		return err
	}
	if mode != ModeNow {
		j, err := st.Get(ctx, id)
		if err != nil {
			return err
		}
		return a.emit(j, func(w io.Writer) {
			fmt.Fprintf(w, "job %s %s: %d records, runs at %s\nA worker does it: svcconnect jobs work (follow it with svcconnect jobs show %s)\n",
				j.ID, j.State, j.Total, j.RunAt.Format(time.RFC3339), j.ID)
		})
	}
	return a.runJob(ctx, id)
}

// runJob does a job's rows here and now with a progress bar, then reports it; a job with dead
// rows is a failure (exit status 1).
func (a *app) runJob(ctx context.Context, id string) error {
	w, err := a.worker(ctx)
	if err != nil {
		return err
	}
	j, err := w.Store.Get(ctx, id)
	if err != nil {
		return err
	}
	p := a.progress("generate", j.Total)
	p.add(j.Done + j.Dead)
	w.OnRow = func(_ string, _ int, state string) {
		if state != jobs.RowPending {
			p.add(1)
		}
	}
	err = w.Drain(ctx, id)
	p.finish()
	if err != nil {
		return err
	}
	if j, err = w.Store.Get(ctx, id); err != nil {
		return err
	}
	if err := a.emit(j, func(wr io.Writer) { printJob(wr, j) }); err != nil {
		return err
	}
	if j.Dead > 0 {
		return fmt.Errorf("job %s: %d of %d rows dead (svcconnect jobs show %s; svcconnect jobs retry %s)", j.ID, j.Dead, j.Total, j.ID, j.ID)
	}
	if j.Pending+j.Running > 0 {
		return fmt.Errorf("job %s: %d rows wait for a retry; a worker finishes them (svcconnect jobs work)", j.ID, j.Pending+j.Running)
	}
	return nil
}

func printJob(w io.Writer, j jobs.Job) {
	fmt.Fprintf(w, "job %s %-9s %s: %d records, %d done, %d dead, %d pending, %d running",
		j.ID, j.State, j.TemplatePath, j.Total, j.Done, j.Dead, j.Pending, j.Running)
	if j.NotifyState != jobs.NoticeNone {
		fmt.Fprintf(w, ", notice %s", j.NotifyState)
	}
	fmt.Fprintln(w)
}

// worker is the generation worker over this run's client and store.
func (a *app) worker(ctx context.Context) (*worker.Worker, error) {
	s, err := a.settings()
	if err != nil {
		return nil, err
	}
	cl, err := a.client()
	if err != nil {
		return nil, err
	}
	st, err := a.jobStore(ctx)
	if err != nil {
		return nil, err
	}
	n, err := worker.NewNotifier(s.NotifyWebhookURL, s.NotifySecret)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%s", settings.KeyNotifySecret), err)
	}
	for _, warn := range s.Warnings() {
		fmt.Fprintln(a.env.Stderr, "svcconnect: warning:", warn)
	}
	w := &worker.Worker{Store: st, Renderer: cl, Notifier: n, RetentionDays: s.RetentionDays}
	w.OnPurge = func(p jobs.Purged) {
		if p != (jobs.Purged{}) {
			fmt.Fprintf(a.env.Stderr, "svcconnect: retention: removed %d finished jobs (%d rows) and %d upload-log rows older than %d days\n", p.Jobs, p.Rows, p.Uploads, s.RetentionDays)
		}
	}
	return w, nil
}
