package funcproto

import (
	"context"
	"net/http"
)

// Binding names this project's function.json files use for queue and timer triggers.
const (
	QueueBinding = "msg"
	TimerBinding = "timer"
)

// QueueHandler adapts fn to a queue-triggered function's invocation endpoint. The message
// comes from Data.msg (or the only Data member). fn adds outputs with AddOutput and log lines
// with Logf through ctx. Replies to the host:
//   - fn returns nil: 200 with the outputs;
//   - fn returns an error marked Permanent: 200 without outputs and a Logs line (the message
//     is acknowledged: it can never succeed);
//   - fn returns any other error, or panics: 500 with a Logs line, so the host retries and,
//     after maxDequeueCount failures, moves the message to the poison queue;
//   - the invocation does not decode: 400 with a Logs line (retried, then poisoned: the
//     payload is the host's, so the message is kept for a person to look at).
//
// Every reply is JSON. Logged errors are the code of an *apperr.Error or the error's text:
// keep personal data out of error texts.
func QueueHandler(fn func(ctx context.Context, msg QueueMessage) error) http.Handler {
	return jobHandler(func(ctx context.Context, inv *InvocationRequest) error {
		msg, err := inv.QueueMessage(QueueBinding)
		if err != nil {
			return errDecode{err}
		}
		return fn(ctx, msg)
	})
}

// TimerHandler adapts fn to a timer-triggered function's invocation endpoint, with the same
// replies as QueueHandler (the host does not retry timers: a non-2xx reply is a failed run).
func TimerHandler(fn func(ctx context.Context, info TimerInfo) error) http.Handler {
	return jobHandler(func(ctx context.Context, inv *InvocationRequest) error {
		info, err := inv.Timer(TimerBinding)
		if err != nil {
			return errDecode{err}
		}
		return fn(ctx, info)
	})
}

// errDecode marks a decoding failure of the trigger itself.
type errDecode struct{ err error }

func (e errDecode) Error() string { return e.err.Error() }
func (e errDecode) Unwrap() error { return e.err }

func jobHandler(run func(ctx context.Context, inv *InvocationRequest) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			writeInvocationResponse(w, http.StatusMethodNotAllowed, &InvocationResponse{
				Logs: []string{"funcproto: invocations are POSTed; got " + truncate(r.Method, 16)}})
			return
		}
		inv, err := DecodeInvocation(r.Body)
		st := newState(r, inv)
		if err != nil {
			st.logf("funcproto: invocation not decoded: %s", errorSummary(err))
			writeInvocationResponse(w, http.StatusBadRequest, &InvocationResponse{Logs: st.takeLogs()})
			return
		}
		ctx := withState(r.Context(), st)
		err, panicked := runRecovered(st, func() error { return run(ctx, inv) })
		switch {
		case panicked:
			writeInvocationResponse(w, http.StatusInternalServerError, &InvocationResponse{Logs: st.takeLogs()})
		case err == nil:
			writeInvocationResponse(w, http.StatusOK, &InvocationResponse{Outputs: st.takeOutputs(), Logs: st.takeLogs()})
		case isDecode(err):
			st.logf("funcproto: invocation not decoded: %s", errorSummary(err))
			writeInvocationResponse(w, http.StatusBadRequest, &InvocationResponse{Logs: st.takeLogs()})
		case IsPermanent(err):
			st.logf("funcproto: permanent failure, acknowledged without outputs: %s", errorSummary(err))
			writeInvocationResponse(w, http.StatusOK, &InvocationResponse{Logs: st.takeLogs()})
		default:
			st.logf("funcproto: failed, to be retried: %s", errorSummary(err))
			writeInvocationResponse(w, http.StatusInternalServerError, &InvocationResponse{Logs: st.takeLogs()})
		}
	})
}

func isDecode(err error) bool {
	_, ok := err.(errDecode)
	return ok
}

func runRecovered(st *state, fn func() error) (err error, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			panicked = true
			st.logf("funcproto: handler panicked: %s", panicSummary(p))
		}
	}()
	return fn(), false
}
