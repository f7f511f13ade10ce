package queues

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/funcproto"
)

// root is the repository, from shared/queues.
var root = filepath.Join("..", "..")

type binding struct {
	Type      string `json:"type"`
	Direction string `json:"direction"`
	Name      string `json:"name"`
	QueueName string `json:"queueName"`
}

// function is one function.json: its app, its function name and its bindings.
type function struct {
	app      App
	name     string
	bindings []binding
}

func functions(t *testing.T) []function {
	t.Helper()
	var fns []function
	for _, app := range []App{Dispatcher, Processor} {
		files, err := filepath.Glob(filepath.Join(root, string(app), "functions", "*", "function.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no function.json files (%v)", app, err)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var fj struct{ Bindings []binding }
			if err := json.Unmarshal(raw, &fj); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			fns = append(fns, function{app, filepath.Base(filepath.Dir(f)), fj.Bindings})
		}
	}
	return fns
}

func byName() map[string]*Spec {
	m := map[string]*Spec{}
	for _, s := range All() {
		m[s.Name] = s
	}
	return m
}

// Names, bindings and readers are unique, every message type is a struct, and every queue
// says what becomes of its poisoned messages.
func TestRegistryIsConsistent(t *testing.T) {
	t.Parallel()
	names, binds, readers := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range All() {
		if s.Name == "" || s.Binding == "" || s.Reader == "" || s.Poison == "" || len(s.Writers) == 0 {
			t.Errorf("%+v: a queue needs a name, binding, reader, writers and poison handling", s)
		}
		if names[s.Name] || binds[s.Binding] || readers[s.Reader] {
			t.Errorf("%s: its name, binding %q or reader %q is declared twice", s.Name, s.Binding, s.Reader)
		}
		names[s.Name], binds[s.Binding], readers[s.Reader] = true, true, true
		if s.Message.Kind() != reflect.Struct {
			t.Errorf("%s: message type %v is not a struct", s.Name, s.Message)
		}
	}
	if len(All()) != 15 {
		t.Errorf("%d queues declared, want 15", len(All()))
	}
}

// Every queue trigger and queue output binding of every function.json is the registry's: a
// trigger on a queue runs its Reader (on a poison queue, its PoisonReader) under the binding
// name "msg"; an output binding on a queue has the queue's Binding name and its app is one of
// the queue's Writers. And the other way: every declared reader, poison reader and writer app
// is there.
func TestRegistryMatchesFunctionJSON(t *testing.T) {
	t.Parallel()
	specs := byName()
	readers := map[string]string{} // function -> queue it is triggered by
	writers := map[string]map[App]bool{}
	for _, fn := range functions(t) {
		for _, b := range fn.bindings {
			switch {
			case b.Type == "queueTrigger":
				if b.Name != funcproto.QueueBinding {
					t.Errorf("%s/%s: trigger binding %q, want %q", fn.app, fn.name, b.Name, funcproto.QueueBinding)
				}
				readers[fn.name] = b.QueueName
				base, poison := strings.CutSuffix(b.QueueName, "-poison")
				s := specs[base]
				switch {
				case s == nil:
					t.Errorf("%s/%s: triggered by undeclared queue %q", fn.app, fn.name, b.QueueName)
				case fn.app != Processor:
					t.Errorf("%s/%s: only the processor reads queues", fn.app, fn.name)
				case poison && s.PoisonReader != fn.name:
					t.Errorf("%s/%s reads %s: the registry's poison reader is %q", fn.app, fn.name, b.QueueName, s.PoisonReader)
				case !poison && s.Reader != fn.name:
					t.Errorf("%s/%s reads %s: the registry's reader is %q", fn.app, fn.name, b.QueueName, s.Reader)
				}
			case b.Type == "queue":
				s := specs[b.QueueName]
				if s == nil || b.Direction != "out" {
					t.Errorf("%s/%s: queue binding %+v is not an output on a declared queue", fn.app, fn.name, b)
					continue
				}
				if b.Name != s.Binding {
					t.Errorf("%s/%s: output binding %q on %s, the registry's is %q", fn.app, fn.name, b.Name, s.Name, s.Binding)
				}
				if !slices.Contains(s.Writers, fn.app) {
					t.Errorf("%s/%s writes %s: %s is not among its writers %v", fn.app, fn.name, s.Name, fn.app, s.Writers)
				}
				if writers[s.Name] == nil {
					writers[s.Name] = map[App]bool{}
				}
				writers[s.Name][fn.app] = true
			}
		}
	}
	for _, s := range All() {
		if readers[s.Reader] != s.Name {
			t.Errorf("%s: reader %s has no queueTrigger on it", s.Name, s.Reader)
		}
		if s.PoisonReader != "" && readers[s.PoisonReader] != s.PoisonQueue() {
			t.Errorf("%s: poison reader %s has no queueTrigger on %s", s.Name, s.PoisonReader, s.PoisonQueue())
		}
		for _, app := range s.Writers {
			if !writers[s.Name][app] {
				t.Errorf("%s: writer %s has no output binding on it", s.Name, app)
			}
		}
	}
}

// main.bicep creates exactly the declared queues and their poison queues.
func TestRegistryMatchesBicep(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(root, "infra", "main.bicep"))
	if err != nil {
		t.Fatal(err)
	}
	// The list is inline in the queues resource or its var queueNames (the role assignments loop
	// over it too).
	m := regexp.MustCompile(`(?:queues@[^\]]*\[for name in |\nvar queueNames = )\[([^\]]*)\]`).FindSubmatch(raw)
	if m == nil {
		t.Fatal("main.bicep declares no queue list")
	}
	var bicep, want []string
	for _, q := range strings.Split(string(m[1]), ",") {
		bicep = append(bicep, strings.Trim(strings.TrimSpace(q), "'"))
	}
	for _, s := range All() {
		want = append(want, s.Name, s.PoisonQueue())
	}
	sort.Strings(bicep)
	sort.Strings(want)
	if !slices.Equal(bicep, want) {
		t.Fatalf("main.bicep queues %v\nregistry's        %v", bicep, want)
	}
}

// Wire compatibility: a message as the apps wrote it before the registry (one sample per
// queue, both writers' forms of workflow-callback) decodes into the queue's message type and
// encodes back to the same JSON, so messages already on the queues still decode.
func TestMessagesOnTheQueuesStillDecode(t *testing.T) {
	t.Parallel()
	samples := map[string][]string{
		"seal":              {`{"groupId":"g","tenantId":"t"}`, `{"groupId":"g","tenantId":"t","attempt":2}`},
		"notifications":     {`{"kind":"invitation","groupId":"g","tenantId":"t","slot":0,"linkJti":"j","reminder":true}`, `{"kind":"invitation","groupId":"g","tenantId":"t","slot":0,"targets":[{"slot":0,"linkJti":"a"},{"slot":1,"linkJti":"b"}]}`, `{"kind":"revoke_notice","groupId":"g","tenantId":"t","slot":-1}`},
		"signeddelivery":    {`{"groupId":"g","tenantId":"t"}`},
		"portalpurge":       {`{"groupId":"g","tenantId":"t"}`},
		"deliveryinvite":    {`{"deliveryId":"d","tenantId":"t"}`},
		"deliveryupload":    {`{"deliveryId":"d","tenantId":"t"}`},
		"dispatch":          {`{"batchId":"b","tenantId":"t"}`, `{"batchId":"b","tenantId":"t","from":50}`},
		"dispatch-record":   {`{"batchId":"b","tenantId":"t","index":0}`},
		"dispatch-finish":   {`{"batchId":"b","tenantId":"t"}`},
		"dispatch-notify":   {`{"batchId":"b","tenantId":"t","kind":"approvers"}`},
		"workflow-notify":   {`{"kind":"approval","workflowId":"w","tenantId":"t","reviewer":"r"}`, `{"kind":"invitation","workflowId":"w","tenantId":"t","resend":true}`},
		"workflow-seal":     {`{"workflowId":"w","tenantId":"t"}`},
		"workflow-callback": {`{"workflowId":"w","tenantId":"t","state":"complete"}`, `{"workflowId":"w","tenantId":"t","attempt":1}`},
		"workflow-trigger":  {`{"workflowId":"w","tenantId":"t"}`},
		"licence-usage":     {`{"id":"batch.record:b:7","tenantId":"t","kind":"batch.record","at":"2026-03-04T05:06:07Z"}`, `{"records":[{"id":"batch.record:b:7","tenantId":"t","kind":"batch.record","at":"2026-03-04T05:06:07Z"},{"id":"batch.record:b:8","tenantId":"t","kind":"batch.record","at":"2026-03-04T05:06:07Z"}]}`},
	}
	for _, s := range All() {
		if len(samples[s.Name]) == 0 {
			t.Errorf("%s: no wire sample", s.Name)
		}
		for _, in := range samples[s.Name] {
			v := reflect.New(s.Message)
			dec := json.NewDecoder(strings.NewReader(in))
			dec.DisallowUnknownFields()
			if err := dec.Decode(v.Interface()); err != nil {
				t.Errorf("%s: %s does not decode into %v: %v", s.Name, in, s.Message, err)
				continue
			}
			out, err := json.Marshal(v.Interface())
			if err != nil || !bytes.Equal(out, []byte(in)) {
				t.Errorf("%s: %s encodes back as %s (%v)", s.Name, in, out, err)
			}
		}
	}
}
