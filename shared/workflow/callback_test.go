package workflow

import (
	"reflect"
	"testing"
)

func TestCallbackAttempts(t *testing.T) {
	t.Parallel()
	type ev struct {
		kind string
		data map[string]any
	}
	tests := []struct {
		name  string
		state State
		a     CallbackAttempt
		want  []ev
		err   bool
	}{
		{"retry after 500", StateComplete, CallbackAttempt{Attempt: 1, Status: 500},
			[]ev{{EvCallbackAttempted, map[string]any{"attempt": 1, "status": 500}}}, false},
		{"delivered", StateRejected, CallbackAttempt{Attempt: 2, Status: 204, End: CallbackDelivered},
			[]ev{{EvCallbackAttempted, map[string]any{"attempt": 2, "status": 204}}, {EvCallbackDelivered, map[string]any{"attempt": 2}}}, false},
		{"timeout spent", StateCancelled, CallbackAttempt{Attempt: 7, Code: "timeout", End: CallbackFailed},
			[]ev{{EvCallbackAttempted, map[string]any{"attempt": 7, "code": "timeout"}}, {EvCallbackFailed, map[string]any{"attempt": 7, "code": "timeout"}}}, false},
		{"not ended", StateSealing, CallbackAttempt{Attempt: 1, Status: 200, End: CallbackDelivered}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &Workflow{ID: "wf", State: tc.state, Content: Content{Setup: Setup{CallbackURL: "https://example.test/cb?sig=secret"}}}
			before := *w
			ch, err := w.Callback(tc.a, t0)
			if (err != nil) != tc.err {
				t.Fatalf("err %v", err)
			}
			var got []ev
			for _, e := range ch.Events {
				got = append(got, ev{e.Kind, e.Data})
			}
			if !reflect.DeepEqual(got, tc.want) || len(ch.Effects) != 0 {
				t.Fatalf("events %v effects %v, want %v", got, ch.Effects, tc.want)
			}
			if w.State != before.State || w.Setup.CallbackURL != before.Setup.CallbackURL || !w.UpdatedAt.Equal(before.UpdatedAt) {
				t.Fatalf("the workflow changed: %+v", w)
			}
		})
	}
}
