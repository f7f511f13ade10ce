package esign

// Queue names (DESIGN section 3). Each has a poison queue "<name>-poison" that the processor
// handles.
const (
	QueueSeal          = "seal"
	QueueNotifications = "notifications"
)

// SealMessage asks the processor to seal a session whose required slots are all signed. It
// carries ids only; the processor loads everything else.
type SealMessage struct {
	GroupID  string `json:"groupId"`
	TenantID string `json:"tenantId"`
	// Attempt counts admin or reconciliation re-queues (0 for the first), for the audit trail.
	Attempt int `json:"attempt,omitempty"`
}

// NotifyMessage asks the processor to send one notification of a session. It carries ids and
// the kind only, never an address or a token: the processor reads the encrypted address, and
// for invitations issues the slot's link with the slot's current link id (LinkJTI), so the
// link in the e-mail is the one the create response returned.
type NotifyMessage struct {
	Kind     string `json:"kind"` // a notify.Kind value
	GroupID  string `json:"groupId"`
	TenantID string `json:"tenantId"`
	Slot     int    `json:"slot"` // -1 for session-level notices
	// LinkJTI pins an invitation to the link it was queued for: a message for a link that a
	// resend has since replaced is dropped (the resend queued its own).
	LinkJTI string `json:"linkJti,omitempty"`
	// Reminder marks a resend-invite.
	Reminder bool `json:"reminder,omitempty"`
}
