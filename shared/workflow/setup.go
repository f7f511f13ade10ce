package workflow

import (
	"encoding/json"
	"fmt"
)

// Setup is what the create request fixed beyond the form (spec "Create-workflow request body"):
// the invited recipients, the OTP gate, the e-mails' wording, the callback and the
// templateSettings.esign and .delivery blocks that start after the seal. It holds personal data
// (addresses), so it lives in Content, which the store keeps encrypted.
type Setup struct {
	SchemaPath       string          `json:"schemaPath,omitempty"`   // templateSettings.workflow.schemaPath
	SchemaLocked     bool            `json:"schemaLocked,omitempty"` // the template locks workflow.schemaPath (DESIGN 14)
	Title            string          `json:"title,omitempty"`        // the schema's title, else the package's name: the sealed record's name
	Recipients       []Recipient     `json:"recipients,omitempty"`
	RequireOTP       bool            `json:"requireOtp,omitempty"`
	OrganizationName string          `json:"organizationName,omitempty"`
	Message          string          `json:"message,omitempty"`
	CallbackURL      string          `json:"callbackUrl,omitempty"`
	ESign            json.RawMessage `json:"esign,omitempty"`    // templateSettings.esign, kept for after the seal
	Delivery         json.RawMessage `json:"delivery,omitempty"` // templateSettings.delivery, kept for after the seal
	// DocumentID and DocType are the request's options.documentId and .docType: the sealed
	// record's and its auto-triggered signing session's or deliveries' (else the workflow id and
	// DocType; see Workflow.Document).
	DocumentID string `json:"documentId,omitempty"`
	DocType    string `json:"docType,omitempty"`
}

// Recipient is one invited participant; the first also receives the OTP.
type Recipient struct {
	Email       string `json:"email"`
	DisplayName string `json:"displayName,omitempty"`
	// Locale is the participant's language (BCP 47, a supported one: shared/i18n) for the
	// e-mails; empty: English.
	Locale string `json:"locale,omitempty"`
}

// ParticipantID is the participant claim (sub) of the participant's portal token: one form per
// workflow, whoever of the recipients fills it.
const ParticipantID = "participant"

// ReviewerID names one approver's turn: the approval round, the stage (1-based) and the index of
// the approver in the stage's routing sequence. It is the participant claim (sub) of that
// approver's reviewer token, and travels in the approval notification for the processor to issue
// the token with.
func ReviewerID(round, stage, approver int) string {
	return fmt.Sprintf("r%d.s%d.a%d", round, stage, approver)
}

// CurrentReviewer is the ReviewerID of the approver whose turn it is, "" outside
// pending-approval.
func (w *Workflow) CurrentReviewer() string {
	if w.State != StatePendingApproval {
		return ""
	}
	return ReviewerID(w.Round, w.Stage+1, w.Approver)
}

// ReviewerLive reports whether a reviewer token naming id may still act: only the current
// approver's turn is live, so a token dies once its approver decided (the stage, the state or
// the round moved on), was escalated past (the approver index moved on), or the workflow left
// pending-approval. Decided from the workflow's state, never from a clock.
func (w *Workflow) ReviewerLive(id string) bool {
	cur := w.CurrentReviewer()
	return cur != "" && id == cur
}

// Queue names of the workflow's messages.
const (
	QueueNotify = "workflow-notify" // NotifyMessage: invitations and approval e-mails
	QueueSeal   = "workflow-seal"   // SealMessage: the seal job
	// QueueTrigger carries TriggerMessage: start a complete workflow's auto-trigger.
	QueueTrigger = "workflow-trigger"
)

// Kinds of NotifyMessage.
const (
	NotifyInvitation = "workflow_invitation" // the recipients, with the participant's portal link
	NotifyChanges    = "workflow_changes"    // the recipients: a reviewer requested changes
	NotifyApproval   = "workflow_approval"   // the current approver, with a reviewer link
)

// NotifyMessage asks the processor to e-mail a workflow's recipients or current approver. It
// carries ids only: the processor loads the workflow for the addresses and issues the portal
// token (participant: ParticipantID; approver: Reviewer, role reviewer) when it sends.
type NotifyMessage struct {
	Kind       string `json:"kind"`
	WorkflowID string `json:"workflowId"`
	TenantID   string `json:"tenantId"`
	Reviewer   string `json:"reviewer,omitempty"` // ReviewerID, for NotifyApproval
	Resend     bool   `json:"resend,omitempty"`
}

// SealMessage asks the processor's workflow-seal job to seal a workflow in sealing.
type SealMessage struct {
	WorkflowID string `json:"workflowId"`
	TenantID   string `json:"tenantId"`
}

// TriggerMessage asks the processor's workflow-trigger job to start a complete workflow's
// auto-trigger: the same ids.
type TriggerMessage = SealMessage

// QueueCallback is the queue of CallbackMessage.
const QueueCallback = "workflow-callback"

// CallbackMessage asks the processor to POST a terminal workflow's callback (DESIGN 10: signed,
// retried with back-off over 24 h); the processor reads the URL and the state it posts from the
// workflow. The queue's one message type: the dispatcher's (State set, Attempt 0) and the
// processor's (workflow-seal's first attempt and the callback job's re-queues: Attempt set,
// State empty) spell the same JSON as before the two types were merged.
type CallbackMessage struct {
	WorkflowID string `json:"workflowId"`
	TenantID   string `json:"tenantId"`
	State      string `json:"state,omitempty"`   // the ended state, when the dispatcher queued it
	Attempt    int    `json:"attempt,omitempty"` // 1 for the first; 0 reads as 1
}
