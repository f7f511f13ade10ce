package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/esign-svc/esign/connector/jobs"
)

func cmdJobs(ctx context.Context, a *app, args []string) error {
	return sub(ctx, a, "jobs", args, map[string]command{
		"list": jobsList, "show": jobsShow, "work": jobsWork, "retry": jobsRetry, "purge": jobsPurge, "uploads": jobsUploads,
	})
}

func jobsList(ctx context.Context, a *app, args []string) error {
	fs := a.flags("jobs list")
	_, st, err := a.withStore(ctx, fs, args, 0, "no arguments")
	if err != nil {
		return err
	}
	list, err := st.List(ctx)
	if err != nil {
		return err
	}
	if list == nil {
		list = []jobs.Job{}
	}
	return a.emit(list, func(w io.Writer) {
		for _, j := range list {
			printJob(w, j)
		}
		fmt.Fprintf(w, "%d jobs\n", len(list))
	})
}

func jobsShow(ctx context.Context, a *app, args []string) error {
	fs := a.flags("jobs show")
	pos, st, err := a.withStore(ctx, fs, args, 1, "one JOB_ID")
	if err != nil {
		return err
	}
	j, err := st.Get(ctx, pos[0])
	if err != nil {
		return err
	}
	rows, err := st.Rows(ctx, j.ID)
	if err != nil {
		return err
	}
	out := struct {
		jobs.Job
		Rows []jobs.RowState `json:"rows"`
	}{j, rows}
	return a.emit(out, func(w io.Writer) {
		printJob(w, j)
		for _, r := range rows {
			fmt.Fprintf(w, "  %4d %-7s attempts %d/%d %s\n", r.Index, r.State, r.Attempts, r.MaxRetry, r.LastError)
		}
	})
}

func jobsWork(ctx context.Context, a *app, args []string) error {
	fs := a.flags("jobs work")
	once := fs.Bool("once", false, "do one due row and stop")
	drain := fs.Bool("drain", false, "do the due rows and stop when none is left")
	jobID := fs.String("job", "", "only this job's rows")
	lease := fs.Duration("lease", 2*time.Minute, "how long a row is this worker's before another may take it (a killed worker's row runs again after it)")
	retryDelay := fs.Duration("retry-delay", 10*time.Second, "wait before a failed row's next attempt, doubled per attempt (0: at once)")
	poll := fs.Duration("poll", time.Second, "wait between looks at the queue when nothing is due")
	if _, err := a.parse(fs, args, 0, "flags only"); err != nil {
		return err
	}
	if *once && *drain {
		return usagef("jobs work: --once or --drain, not both")
	}
	if *lease <= 0 || *poll <= 0 || *retryDelay < 0 {
		return usagef("jobs work: --lease and --poll must be positive, --retry-delay not negative")
	}
	w, err := a.worker(ctx)
	if err != nil {
		return err
	}
	w.Lease, w.Poll, w.RetryDelay = *lease, *poll, *retryDelay
	if *retryDelay == 0 {
		w.RetryDelay = -1
	}
	w.OnRow = func(job string, index int, state string) {
		if a.output == "text" {
			fmt.Fprintf(a.env.Stdout, "job %s row %d %s\n", job, index, state)
		}
	}
	switch {
	case *once:
		ok, err := w.Once(ctx, *jobID)
		if err == nil && !ok && a.output == "text" {
			fmt.Fprintln(a.env.Stdout, "no row is due")
		}
		return err
	case *drain:
		return w.Drain(ctx, *jobID)
	}
	return w.Serve(ctx)
}

func jobsRetry(ctx context.Context, a *app, args []string) error {
	fs := a.flags("jobs retry")
	pos, st, err := a.withStore(ctx, fs, args, 1, "one JOB_ID")
	if err != nil {
		return err
	}
	n, err := st.Retry(ctx, pos[0])
	if err != nil {
		return err
	}
	out := map[string]any{"jobId": pos[0], "revived": n}
	return a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "job %s: %d dead rows queued again (a worker does them: svcconnect jobs work)\n", pos[0], n)
	})
}

func jobsPurge(ctx context.Context, a *app, args []string) error {
	fs := a.flags("jobs purge")
	if _, err := a.parse(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	s, err := a.settings()
	if err != nil {
		return err
	}
	st, err := a.jobStore(ctx)
	if err != nil {
		return err
	}
	p, err := st.Purge(ctx, s.RetentionDays)
	if err != nil {
		return err
	}
	return a.emit(p, func(w io.Writer) {
		if s.RetentionDays == 0 {
			fmt.Fprintln(w, "SERVICE_LOG_RETENTION_DAYS is 0: purge disabled, nothing removed")
			return
		}
		fmt.Fprintf(w, "removed %d finished jobs (%d rows) and %d upload-log rows older than %d days\n", p.Jobs, p.Rows, p.Uploads, s.RetentionDays)
	})
}

func jobsUploads(ctx context.Context, a *app, args []string) error {
	fs := a.flags("jobs uploads")
	_, st, err := a.withStore(ctx, fs, args, 0, "no arguments")
	if err != nil {
		return err
	}
	list, err := st.Uploads(ctx)
	if err != nil {
		return err
	}
	if list == nil {
		list = []jobs.Upload{}
	}
	return a.emit(list, func(w io.Writer) {
		for _, u := range list {
			fmt.Fprintf(w, "%s %s %s %d bytes\n", u.At.Format(time.RFC3339), u.File, u.PDFBlobPath, u.Size)
		}
	})
}
