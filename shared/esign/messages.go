package esign

import "time"

// Queue names (DESIGN section 3). Each has a poison queue "<name>-poison" that the processor
// handles.
const (
	QueueSeal          = "seal"
	QueueNotifications = "notifications"
	// QueueSignedDelivery carries SealMessage: the delivery that waited for the session's
	// signing (processor/signeddelivery).
	QueueSignedDelivery = "signeddelivery"
	// QueuePortalPurge carries PurgeMessage: purge a sealed session's data at the portal.
	QueuePortalPurge = "portalpurge"
)

// PurgeMessage asks the processor to purge a sealed session's copy at the portal.
type PurgeMessage struct {
	GroupID  string `json:"groupId"`
	TenantID string `json:"tenantId"`
}

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
	// Reminder marks a resend-invite or an automatic reminder.
	Reminder bool `json:"reminder,omitempty"`
	// Round is the number of an automatic reminder without a link (ReminderNotice), so that
	// each goes out once.
	Round int `json:"round,omitempty"`
	// Targets, when present, make one message of a change's notifications of this kind: one
	// target per slot (with its link id), instead of Slot and LinkJTI. The processor sends each
	// target as its own notification (its own claim and audit event).
	Targets []NotifyTarget `json:"targets,omitempty"`
}

// NotifyTarget is one slot of a NotifyMessage with targets.
type NotifyTarget struct {
	Slot    int    `json:"slot"`
	LinkJTI string `json:"linkJti,omitempty"`
}

// Split is the message's single-target messages: itself when it has no targets.
func (m NotifyMessage) Split() []NotifyMessage {
	if len(m.Targets) == 0 {
		return []NotifyMessage{m}
	}
	out := make([]NotifyMessage, 0, len(m.Targets))
	for _, t := range m.Targets {
		one := m
		one.Targets, one.Slot, one.LinkJTI = nil, t.Slot, t.LinkJTI
		out = append(out, one)
	}
	return out
}

// KindInvitation is the NotifyMessage kind of a signer's invitation (notify.KindInvitation).
const KindInvitation = "invitation"

// OwedInvitations are the invitations the session owes its signers at now, as the messages the
// change that invited them queued: one per slot that is invited and open, whose current link is
// unused and whose address is kept, while the session is live. A slot still pending got its link
// from the invitation of Start or of the sequential order (no reminder) unless an automatic
// reminder replaced it (Reminders > 0: queued as a reminder); an open slot past pending
// with an unused link can only hold a link of resend-invite (activation uses the link), which
// queued it as a reminder. The invitation reconciler sends those not recorded as sent.
func OwedInvitations(s *Session, slots []Slot, now time.Time) []NotifyMessage {
	if CheckLive(s, now) != nil {
		return nil
	}
	var out []NotifyMessage
	for _, sl := range slots {
		if !sl.Invited || !sl.State.Open() || sl.LinkUsed || sl.LinkJTI == "" || sl.EmailEnc == "" {
			continue
		}
		out = append(out, NotifyMessage{Kind: KindInvitation, GroupID: s.GroupID, TenantID: s.TenantID, Slot: sl.Index,
			LinkJTI: sl.LinkJTI, Reminder: sl.State != SlotPending || sl.Reminders > 0})
	}
	return out
}
