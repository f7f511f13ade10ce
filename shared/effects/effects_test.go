package effects

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/queues"
)

// run emits ch inside a real invocation and returns the queue outputs the host would write.
func run(t *testing.T, s *esign.Session, ch esign.Change) map[string][]map[string]any {
	t.Helper()
	slots := []esign.Slot{{Index: 0, LinkJTI: "j0"}, {Index: 1, LinkJTI: "j1"}}
	out := map[string][]map[string]any{}
	for name, raws := range invoke(t, func(r *http.Request) error { return Emit(r.Context(), s, slots, ch, false) }) {
		if name == "res" {
			continue
		}
		for _, raw := range raws {
			var one map[string]any
			_ = json.Unmarshal(raw, &one)
			out[name] = append(out[name], one)
		}
	}
	return out
}

func notifyKinds(out map[string][]map[string]any) string {
	var k []string
	for _, m := range out[queues.Notifications.Binding()] {
		k = append(k, m["kind"].(string))
	}
	sort.Strings(k)
	return strings.Join(k, ",")
}

// TestRequesterNoticeGates: each requester notice leaves exactly when the spec's gate allows:
// requestedByEmail for all of them, and sendPerSignerNotices as well for the per-signer notice.
func TestRequesterNoticeGates(t *testing.T) {
	t.Parallel()
	signed := esign.Change{Effects: []esign.Effect{{Kind: esign.EffectSignerNotice, Slot: 0}}}
	declined := esign.Change{Effects: []esign.Effect{{Kind: esign.EffectDeclined, Slot: 1}}}
	revoked := esign.Change{Effects: []esign.Effect{{Kind: esign.EffectRevoked, Slot: -1}}}
	cases := []struct {
		name      string
		requester bool
		perSigner bool
		ch        esign.Change
		want      string
	}{
		{"signer notice with both gates", true, true, signed, "requester_signer_notice"},
		{"signer notice without per-signer notices", true, false, signed, ""},
		{"signer notice without requester", false, true, signed, ""},
		{"decline notice with requester", true, false, declined, "requester_decline_notice"},
		{"decline notice without requester", false, true, declined, ""},
		{"revoke notice with requester", true, false, revoked, "requester_revoke_notice"},
		{"revoke notice without requester", false, true, revoked, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &esign.Session{GroupID: "g", TenantID: "t", SendPerSignerNotices: tc.perSigner}
			if tc.requester {
				s.RequestedByEmailEnc = "v1.k.ciphertext"
			}
			if got := notifyKinds(run(t, s, tc.ch)); got != tc.want {
				t.Fatalf("notices %q, want %q", got, tc.want)
			}
		})
	}
}

func TestInvitesAndSeal(t *testing.T) {
	t.Parallel()
	s := &esign.Session{GroupID: "g", TenantID: "t"}
	out := run(t, s, esign.Change{Effects: []esign.Effect{{Kind: esign.EffectInvite, Slot: 1}, {Kind: esign.EffectSeal, Slot: -1}}})
	inv := out[queues.Notifications.Binding()]
	if len(inv) != 1 || inv[0]["kind"] != "invitation" || inv[0]["linkJti"] != "j1" || inv[0]["slot"] != float64(1) || inv[0]["groupId"] != "g" {
		t.Fatalf("invitation %v", inv)
	}
	seal := out[queues.Seal.Binding()]
	if len(seal) != 1 || seal[0]["groupId"] != "g" || seal[0]["tenantId"] != "t" {
		t.Fatalf("seal %v", seal)
	}
	for _, m := range inv {
		for k := range m {
			if strings.Contains(strings.ToLower(k), "email") || strings.Contains(strings.ToLower(k), "token") {
				t.Fatalf("a notify message carries %s", k)
			}
		}
	}
}

// TestInvitationsOfOneChangeAreOneMessage: a change inviting two slots leaves one
// notification message with a target per slot (the storage shape issue 9 asks for).
func TestInvitationsOfOneChangeAreOneMessage(t *testing.T) {
	t.Parallel()
	s := &esign.Session{GroupID: "g", TenantID: "t"}
	out := run(t, s, esign.Change{Effects: []esign.Effect{{Kind: esign.EffectInvite, Slot: 0}, {Kind: esign.EffectInvite, Slot: 1}}})
	inv := out[queues.Notifications.Binding()]
	if len(inv) != 1 || inv[0]["kind"] != "invitation" {
		t.Fatalf("invitations %v", inv)
	}
	targets, _ := inv[0]["targets"].([]any)
	if len(targets) != 2 || targets[1].(map[string]any)["slot"] != float64(1) || targets[1].(map[string]any)["linkJti"] != "j1" ||
		targets[0].(map[string]any)["linkJti"] != "j0" {
		t.Fatalf("targets %v", targets)
	}
}

// TestUnknownKindIsRefused: an effect kind the dispatcher does not carry out (here a sealing
// notice, which only the processor sends) is an internal error, and no output of the change
// leaves, not even the known effects before it.
func TestUnknownKindIsRefused(t *testing.T) {
	t.Parallel()
	s := &esign.Session{GroupID: "g", TenantID: "t", RequestedByEmailEnc: "v1.k.ciphertext"}
	slots := []esign.Slot{{Index: 0, LinkJTI: "j0"}}
	for _, kind := range []esign.EffectKind{esign.EffectDocumentsReady, "no_such_effect"} {
		ch := esign.Change{Effects: []esign.Effect{{Kind: esign.EffectInvite, Slot: 0}, {Kind: kind, Slot: -1}}}
		var emitErr error
		h := funcproto.HTTPInvocation(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			emitErr = Emit(r.Context(), s, slots, ch, false)
			w.WriteHeader(http.StatusOK)
		}))
		inv := `{"Data":{"req":{"Url":"http://127.0.0.1/api/x","Method":"POST","Query":{},"Headers":{},"Params":{},"Body":""}},"Metadata":{}}`
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/Fn", strings.NewReader(inv)))
		var e *apperr.Error
		if !errors.As(emitErr, &e) || e.Kind != apperr.KindInternal || e.Code != esign.CodeUnknownEffect || !strings.Contains(e.Detail, string(kind)) {
			t.Fatalf("%s: error %v", kind, emitErr)
		}
		var resp struct{ Outputs map[string]json.RawMessage }
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
			t.Fatalf("%v: %s", err, rec.Body.String())
		}
		if _, ok := resp.Outputs[queues.Notifications.Binding()]; ok {
			t.Fatalf("%s: outputs %v", kind, resp.Outputs)
		}
	}
}
