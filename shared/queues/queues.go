// Package queues is the registry of the storage queues between the apps: every queue is declared
// here once, with its one message type, the output binding name every function that writes it
// uses in its function.json, the apps that write it, the processor function that reads it and
// what becomes of a message the host gives up on (its poison queue). Only shared/effects turns
// these declarations into queue outputs (effects.Send and the effect interpreters); the test
// checks the registry against every function.json and against infra/main.bicep.
package queues

import (
	"reflect"

	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/workflow"
)

// App is a Function App that writes queues through output bindings.
type App string

// The apps.
const (
	Dispatcher App = "dispatcher"
	Processor  App = "processor"
)

// Spec declares one queue.
type Spec struct {
	Name string // the queue, as in function.json and main.bicep
	// Binding is the name of the output binding on Name in every function.json that writes it.
	Binding string
	Message reflect.Type // the one Go type of its messages (JSON)
	Writers []App        // the apps with an output binding on it
	Reader  string       // the processor function its queueTrigger runs
	// PoisonReader is the processor function that reads Poison(), or "" when the poison queue
	// only keeps the messages for an operator.
	PoisonReader string
	Poison       string // what becomes of a message the host gave up on
}

// PoisonQueue is the queue the host moves a message to after its retries: "<name>-poison".
func (s *Spec) PoisonQueue() string { return s.Name + "-poison" }

// Queue is a declared queue of messages of type M.
type Queue[M any] struct{ spec *Spec }

// Binding is q's output binding name.
func (q Queue[M]) Binding() string { return q.spec.Binding }

var all []*Spec

func declare[M any](s Spec) Queue[M] {
	s.Message = reflect.TypeFor[M]()
	all = append(all, &s)
	return Queue[M]{&s}
}

// All is every declared queue, in declaration order.
func All() []*Spec { return append([]*Spec(nil), all...) }

var (
	both      = []App{Dispatcher, Processor}
	dispatchr = []App{Dispatcher}
	processor = []App{Processor}
)

// The queues.
var (
	Seal = declare[esign.SealMessage](Spec{Name: esign.QueueSeal, Binding: "seal", Writers: both,
		Reader: "Seal", PoisonReader: "SealPoison",
		Poison: "seal.failed recorded, the session stays sealing for an admin re-queue; the seal-failure notice is queued"})
	Notifications = declare[esign.NotifyMessage](Spec{Name: esign.QueueNotifications, Binding: "notify", Writers: both,
		Reader: "Notify", PoisonReader: "NotifyPoison",
		Poison: "notification.failed (retries_exhausted) recorded in the session's audit trail"})
	SignedDelivery = declare[esign.SealMessage](Spec{Name: esign.QueueSignedDelivery, Binding: "deliver", Writers: processor,
		Reader: "SignedDelivery", PoisonReader: "SignedDeliveryPoison",
		Poison: "session.delivery_failed (retries_exhausted) recorded unless the deliveries were"})
	PortalPurge = declare[esign.PurgeMessage](Spec{Name: esign.QueuePortalPurge, Binding: "purge", Writers: processor,
		Reader: "PortalPurge", PoisonReader: "PortalPurgePoison",
		Poison: "pii.purge_failed (retries_exhausted) recorded unless the portal's pii.purged is in the trail"})
	DeliveryInvite = declare[delivery.InviteMessage](Spec{Name: delivery.QueueInvite, Binding: "invite", Writers: both,
		Reader: "DeliveryInvite", PoisonReader: "DeliveryInvitePoison",
		Poison: "delivery.invite_failed (retries_exhausted) recorded unless it was sent meanwhile"})
	DeliveryUpload = declare[delivery.UploadMessage](Spec{Name: delivery.QueueUpload, Binding: "upload", Writers: both,
		Reader: "DeliveryUpload", PoisonReader: "DeliveryUploadPoison",
		Poison: "delivery.upload_failed (upload_retries_exhausted) recorded unless the upload was"})
	Dispatch = declare[dispatch.BatchMessage](Spec{Name: dispatch.QueueDispatch, Binding: "dispatch", Writers: both,
		Reader: "Dispatch", PoisonReader: "DispatchPoison",
		Poison: "run again as a fan-out (idempotent: only pending records are queued)"})
	DispatchRecord = declare[dispatch.RecordMessage](Spec{Name: dispatch.QueueRecord, Binding: "record", Writers: processor,
		Reader: "DispatchRecord", PoisonReader: "DispatchRecordPoison",
		Poison: "the record recorded failed (retries_exhausted) unless processed meanwhile; may finish the batch"})
	DispatchFinish = declare[dispatch.BatchMessage](Spec{Name: dispatch.QueueFinish, Binding: "finish", Writers: processor,
		Reader: "DispatchFinish", PoisonReader: "DispatchFinishPoison",
		Poison: "the batch finished without the combined PDF or bundle, batch.artifact_failed recorded"})
	DispatchNotify = declare[dispatch.NotifyMessage](Spec{Name: dispatch.QueueNotify, Binding: "dispatchnotify", Writers: both,
		Reader: "DispatchNotify", PoisonReader: "DispatchNotifyPoison",
		Poison: "run again as a notice (its claim keeps one e-mail)"})
	WorkflowNotify = declare[workflow.NotifyMessage](Spec{Name: workflow.QueueNotify, Binding: "workflownotify", Writers: dispatchr,
		Reader: "WorkflowNotify", PoisonReader: "WorkflowNotifyPoison",
		Poison: "workflow.notice_failed {kind} recorded"})
	WorkflowSeal = declare[workflow.SealMessage](Spec{Name: workflow.QueueSeal, Binding: "workflowseal", Writers: dispatchr,
		Reader: "WorkflowSeal", PoisonReader: "WorkflowSealPoison",
		Poison: "workflow.seal_failed (retries_exhausted) recorded on a workflow still sealing"})
	WorkflowCallback = declare[workflow.CallbackMessage](Spec{Name: workflow.QueueCallback, Binding: "workflowcallback", Writers: both,
		Reader: "WorkflowCallback", PoisonReader: "WorkflowCallbackPoison",
		Poison: "workflow.callback_failed (retries_exhausted) recorded"})
	WorkflowTrigger = declare[workflow.TriggerMessage](Spec{Name: workflow.QueueTrigger, Binding: "workflowtrigger", Writers: processor,
		Reader: "WorkflowTrigger", PoisonReader: "WorkflowTriggerPoison",
		Poison: "workflow.trigger_failed (retries_exhausted) recorded unless the trigger ended"})
	LicenceUsage = declare[licensing.UsageMessage](Spec{Name: licensing.Queue, Binding: "usage", Writers: both,
		Reader: "LicenceUsage",
		Poison: "kept in licence-usage-poison for the operator to queue again (no poison function)"})
)
