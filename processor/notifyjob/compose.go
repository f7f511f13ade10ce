package notifyjob

import (
	"context"
	"strconv"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

// compose builds the e-mail for m. It returns the message, the audit event's slot (the slot for
// messages to its signer, -1 for requester notices), or a reason not to send (skip), or an
// error.
func (j *Job) compose(ctx context.Context, kind notify.Kind, m esign.NotifyMessage, sess *esign.Session, slots []esign.Slot, now time.Time) (msg notify.Message, eventSlot int, skip string, err error) {
	switch kind {
	case notify.KindInvitation:
		return j.invitation(m, sess, slots, now)
	case notify.KindSignerReminder:
		return j.signerReminder(m, sess, slots, now)
	case notify.KindSignerCompleted:
		sl, err := slotOf(m, slots)
		if err != nil {
			return msg, 0, "", err
		}
		if sl.State != esign.SlotSigned {
			return msg, 0, "the slot is " + string(sl.State) + ", not signed", nil
		}
		if sl.EmailEnc == "" {
			return msg, 0, "the signer's address was erased", nil
		}
		to, err := j.decrypt(sl.EmailEnc, sess.GroupID, "slot", strconv.Itoa(sl.Index))
		if err != nil {
			return msg, 0, "", err
		}
		msg, err = render(kind, to, notice{Document: sess.DocumentID, Role: sl.Role, When: when(sl.Timeline[esign.SlotSigned])})
		return msg, sl.Index, "", err
	case notify.KindSignerNotice, notify.KindDeclineNotice, notify.KindRevokeNotice, notify.KindDocumentsReady, notify.KindSealFailure:
		return j.requesterNotice(ctx, kind, m, sess, slots, now)
	default:
		return msg, 0, "", errUnknownKind(kind)
	}
}

// invitation issues the slot's current link and renders the invitation. A message for a session
// no longer live, a slot no longer open, or a link that was used or replaced is dropped.
func (j *Job) invitation(m esign.NotifyMessage, sess *esign.Session, slots []esign.Slot, now time.Time) (notify.Message, int, string, error) {
	var msg notify.Message
	sl, skip, err := openSignerSlot(m, sess, slots, now)
	switch {
	case err != nil || skip != "":
		return msg, 0, skip, err
	case m.LinkJTI == "" || sl.LinkJTI == "" || !pii.Equal(m.LinkJTI, sl.LinkJTI):
		return msg, 0, "the message's link is not the slot's current link", nil
	case sl.LinkUsed:
		return msg, 0, "the link was already used", nil
	}
	tok, _, err := j.d.Tokens.IssueSlot(tokens.Slot{GroupID: sess.GroupID, SlotIndex: sl.Index, ID: sl.LinkJTI, ExpiresAt: sess.ExpiresAt})
	if err != nil {
		return msg, 0, "", apperr.Wrap(err, apperr.KindInternal, tokens.CodeIssueFailed, "could not issue the portal link")
	}
	to, err := j.decrypt(sl.EmailEnc, sess.GroupID, "slot", strconv.Itoa(sl.Index))
	if err != nil {
		return msg, 0, "", err
	}
	msg, err = notify.InvitationMessage(to, notify.Invitation{
		SignerName: sl.NamePrefill, DocumentName: sess.Title(), PortalURL: j.portalLink(tok),
		Requester: sess.RequestedBy, Organization: sess.OrganizationName, Reminder: m.Reminder, Locale: sl.Locale,
	})
	return msg, sl.Index, "", err
}

// openSignerSlot is the slot a message to a signer is for, or a reason not to send it: the
// session is no longer live, the slot no longer open, or the signer's address erased.
func openSignerSlot(m esign.NotifyMessage, sess *esign.Session, slots []esign.Slot, now time.Time) (*esign.Slot, string, error) {
	sl, err := slotOf(m, slots)
	switch {
	case err != nil:
		return nil, "", err
	case !sess.State.Live() || sess.Expired(now):
		return nil, "the session is no longer live", nil
	case !sl.State.Open():
		return nil, "the slot is " + string(sl.State), nil
	case sl.EmailEnc == "":
		return nil, "the signer's address was erased", nil
	}
	return sl, "", nil
}

// signerReminder renders the automatic reminder to a signer who opened their link (no link:
// they continue on that device). A message for a session no longer live, a slot no longer open
// or still unopened (its reminder is an invitation with a fresh link) is dropped.
func (j *Job) signerReminder(m esign.NotifyMessage, sess *esign.Session, slots []esign.Slot, now time.Time) (notify.Message, int, string, error) {
	var msg notify.Message
	sl, skip, err := openSignerSlot(m, sess, slots, now)
	switch {
	case err != nil || skip != "":
		return msg, 0, skip, err
	case sl.State == esign.SlotPending:
		return msg, 0, "the slot is " + string(sl.State), nil
	}
	to, err := j.decrypt(sl.EmailEnc, sess.GroupID, "slot", strconv.Itoa(sl.Index))
	if err != nil {
		return msg, 0, "", err
	}
	msg, err = notify.SignerReminderMessage(to, notify.Invitation{
		SignerName: sl.NamePrefill, DocumentName: sess.Title(), Requester: sess.RequestedBy,
		Organization: sess.OrganizationName, Locale: sl.Locale,
	})
	return msg, sl.Index, "", err
}

// requesterNotice renders a notice to the session's requester. Gate (spec): requestedByEmail is
// set; for the per-signer notice also sendPerSignerNotices.
func (j *Job) requesterNotice(ctx context.Context, kind notify.Kind, m esign.NotifyMessage, sess *esign.Session, slots []esign.Slot, now time.Time) (notify.Message, int, string, error) {
	var msg notify.Message
	if sess.RequestedByEmailEnc == "" {
		return msg, -1, "the session has no requestedByEmail", nil
	}
	if kind == notify.KindSignerNotice && !sess.SendPerSignerNotices {
		return msg, -1, "sendPerSignerNotices is off", nil
	}
	n := notice{Document: sess.DocumentID}
	switch kind {
	case notify.KindSignerNotice, notify.KindDeclineNotice:
		sl, err := slotOf(m, slots)
		if err != nil {
			return msg, -1, "", err
		}
		state := esign.SlotSigned
		if kind == notify.KindDeclineNotice {
			state = esign.SlotDeclined
		}
		at, ok := sl.Timeline[state]
		if !ok || sl.State != state {
			return msg, -1, "the slot is " + string(sl.State) + ", not " + string(state), nil
		}
		n.Role, n.When = sl.Role, when(at)
	case notify.KindRevokeNotice:
		if sess.State != esign.SessionCancelled || sess.CancelReason != esign.ReasonRevoked {
			return msg, -1, "the session was not revoked", nil
		}
		at, err := j.lastEvent(ctx, sess.GroupID, esign.EvSessionCancelled, now)
		if err != nil {
			return msg, -1, "", err
		}
		n.When = when(at)
	case notify.KindDocumentsReady:
		if sess.State != esign.SessionComplete {
			return msg, -1, "the session is " + string(sess.State) + ", not complete", nil
		}
		n.When = when(sess.CompletedAt)
	case notify.KindSealFailure:
		at, err := j.lastEvent(ctx, sess.GroupID, esign.EvSealFailed, now)
		if err != nil {
			return msg, -1, "", err
		}
		n.When = when(at)
	}
	to, err := j.decrypt(sess.RequestedByEmailEnc, sess.GroupID, "requestedBy")
	if err != nil {
		return msg, -1, "", err
	}
	msg, err = render(kind, to, n)
	return msg, -1, "", err
}

// lastEvent is the time of the session's latest event of kind, or now when there is none
// (esign.SessionJobs.LastEvent: a trail whose event data is unreadable still answers).
func (j *Job) lastEvent(ctx context.Context, groupID, kind string, now time.Time) (time.Time, error) {
	return j.d.Sessions.LastEvent(ctx, groupID, kind, now)
}

// decrypt opens a stored address. A ciphertext that does not open (wrong key ring, tampered row)
// cannot succeed on retry: Permanent.
func (j *Job) decrypt(ct string, aad ...string) (string, error) {
	pt, err := j.d.Cipher.DecryptString(ct, pii.AAD(aad...))
	if err != nil {
		return "", funcproto.Permanent(err)
	}
	return pt, nil
}

func slotOf(m esign.NotifyMessage, slots []esign.Slot) (*esign.Slot, error) {
	for i := range slots {
		if slots[i].Index == m.Slot {
			return &slots[i], nil
		}
	}
	return nil, funcproto.Permanent(esign.ErrNoSuchSlot)
}
