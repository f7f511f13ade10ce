package conformance

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/devtools/funchost"
)

func timerTrigger(schedule string, runOnStartup bool) string {
	r := ""
	if runOnStartup {
		r = `,"runOnStartup":true`
	}
	return `{"bindings":[{"type":"timerTrigger","direction":"in","name":"timer","schedule":"` + schedule + `"` + r + `}]}`
}

func TestRunTimer(t *testing.T) {
	t.Parallel()
	app := writeApp(t, fastQueues(), map[string]string{
		"Tick":     timerTrigger("%TICK_SCHEDULE%", false),
		"FailTick": timerTrigger("0 0 0 1 1 *", false),
		"Consume":  queueTrigger(queueName("unused"), false),
	})
	e := startHost(t, funchost.ShapeObserved, map[string]string{"TICK_SCHEDULE": "0 */5 * * * *"}, app)
	if err := e.h.RunTimer(t.Context(), "Tick"); err != nil {
		t.Fatal(err)
	}
	recs := e.records(t, "Tick")
	if len(recs) != 1 {
		t.Fatalf("%d Tick invocations, want 1", len(recs))
	}
	var req struct {
		Data struct {
			Timer struct {
				Schedule       struct{ AdjustForDST bool }
				ScheduleStatus struct{ Last, Next, LastUpdated string }
				IsPastDue      *bool
			}
		}
		Metadata struct {
			Sys struct{ MethodName string } `json:"sys"`
		}
	}
	if err := json.Unmarshal(recs[0].Request, &req); err != nil {
		t.Fatal(err)
	}
	tm := req.Data.Timer
	if !tm.Schedule.AdjustForDST || tm.IsPastDue == nil || *tm.IsPastDue || req.Metadata.Sys.MethodName != "Tick" {
		t.Errorf("timer request %s", recs[0].Request)
	}
	next, err := time.Parse(time.RFC3339Nano, tm.ScheduleStatus.Next)
	if err != nil {
		t.Fatalf("ScheduleStatus.Next %q: %v", tm.ScheduleStatus.Next, err)
	}
	if next.Minute()%5 != 0 || next.Second() != 0 || time.Until(next) > 5*time.Minute || time.Until(next) < -time.Minute {
		t.Errorf("ScheduleStatus.Next %s is not the next five-minute mark", next)
	}
	if err := e.h.RunTimer(t.Context(), "FailTick"); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("RunTimer(FailTick) = %v, want the handler's 500", err)
	}
	for _, name := range []string{"Consume", "Nope"} {
		if err := e.h.RunTimer(t.Context(), name); err == nil {
			t.Errorf("RunTimer(%s) gave no error", name)
		}
	}
}

func TestTimerRunOnStartupAndSchedule(t *testing.T) {
	t.Parallel()
	app := writeApp(t, fastQueues(), map[string]string{
		"Boot":  timerTrigger("0 0 0 1 1 *", true),
		"Every": timerTrigger("* * * * * *", false),
	})
	e := &env{recordDir: t.TempDir(), out: &funchost.Output{}}
	h, err := funchost.Start(t.Context(), funchost.Options{Apps: []string{app}, Listen: "127.0.0.1:0", Output: e.out,
		Settings: map[string]string{"AzureWebJobsStorage": connString(), "TH_RECORD_DIR": e.recordDir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	e.waitRecords(t, "Boot", 1, 10*time.Second)
	e.waitRecords(t, "Every", 2, 10*time.Second)
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fns      map[string]string
		settings map[string]string
		ready    time.Duration
		want     []string
	}{
		{"handler crash at start", map[string]string{"Tick": timerTrigger("0 0 0 1 1 *", false)},
			map[string]string{"TH_CRASH": "1"}, 0, []string{"exited before it answered GET /", "exit status 3", "fatal: boom"}},
		{"handler never ready", map[string]string{"Tick": timerTrigger("0 0 0 1 1 *", false)},
			map[string]string{"TH_START_DELAY": "30s"}, 500 * time.Millisecond, []string{"did not answer GET /"}},
		{"unresolved setting", map[string]string{"Tick": timerTrigger("%MISSING_SCHEDULE%", false)},
			nil, 0, []string{"MISSING_SCHEDULE", "not set"}},
		{"bad schedule", map[string]string{"Tick": timerTrigger("0 0 25 * * *", false)},
			nil, 0, []string{"Tick", "hour"}},
		{"route conflict", map[string]string{
			"A": `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req","route":"x","methods":["get"]},{"type":"http","direction":"out","name":"res"}]}`,
			"B": `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req","route":"X","methods":["GET","post"]},{"type":"http","direction":"out","name":"res"}]}`,
		}, nil, 0, []string{"both serve route"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			app := writeApp(t, fastQueues(), tc.fns)
			_, err := tryStart(t, funchost.ShapeObserved, tc.settings, tc.ready, app)
			if err == nil {
				t.Fatal("Start succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestReadinessWait checks that Start returns only once the handler answers GET /: a handler
// that takes a while to listen is usable as soon as Start returns.
func TestReadinessWait(t *testing.T) {
	t.Parallel()
	app := writeApp(t, fastQueues(), map[string]string{
		"Echo": `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req","authLevel":"anonymous","route":"echo"},{"type":"http","direction":"out","name":"res"}]}`,
	})
	e := startHost(t, funchost.ShapeObserved, map[string]string{"TH_START_DELAY": "700ms"}, app)
	resp, body := do(t, "POST", e.h.URL()+"/api/echo", strings.NewReader("ping"), nil)
	if resp.StatusCode != 200 || string(body) != "ping" {
		t.Errorf("first request after Start: %d %q", resp.StatusCode, body)
	}
}
