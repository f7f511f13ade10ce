package deliveryupload

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

// KindInvitation is the outbox/provider kind of a delivery invitation.
const KindInvitation notify.Kind = "delivery_invitation"

// InviteClaimLease is how long an invitation's claim keeps a second sender (a redelivered
// message, the invitation reconciler) from sending it too; an older claim is a dead worker's.
const InviteClaimLease = 2 * time.Minute

// HandleInvite is the DeliveryInvite queue function (delivery.InviteMessage): it runs Invite.
func (j *Job) HandleInvite(ctx context.Context, qm funcproto.QueueMessage) error {
	var m delivery.InviteMessage
	if err := qm.Decode(&m); err != nil {
		return funcproto.Permanent(err)
	}
	return j.Invite(ctx, m)
}

// Invite issues the session's link and e-mails it: the queue job's work, and the invitation
// reconciler's for a message the host lost. A session that ended is skipped; an invitation
// already recorded is acknowledged. Errors: Permanent for a message that can never succeed (a
// provider refusal is recorded as delivery.invite_failed); others are worth retrying.
func (j *Job) Invite(ctx context.Context, m delivery.InviteMessage) error {
	s, err := j.load(ctx, m.DeliveryID, m.TenantID)
	if err != nil {
		return err
	}
	now := j.now().UTC()
	switch {
	case !s.Mode.Emails():
		return funcproto.Permanent(apperr.New(apperr.KindInvalid, "no_invitation", "the delivery's mode sends no e-mail"))
	case delivery.CheckLive(s, now) != nil:
		funcproto.Logf(ctx, "deliveryinvite: %s ended (%s); not sent", s.DeliveryID, s.StateAt(now))
		return nil
	case !s.SentAt.IsZero():
		funcproto.Logf(ctx, "deliveryinvite: %s already sent; acknowledged", s.DeliveryID)
		return nil
	}
	msg, err := j.compose(s, false)
	if err != nil {
		return err
	}
	var (
		sent    bool  // the provider took the message
		refused error // the provider refused it for good
	)
	_, err = j.deliveries.SendInvite(ctx, s.DeliveryID, InviteClaimLease, string(notify.Email), system, func() error {
		err := j.email.Send(notify.WithDedupeID(ctx, "delivery-invite-"+s.DeliveryID), msg)
		if apperr.KindOf(err) == apperr.KindInvalid {
			refused = err
		}
		sent = err == nil
		return err
	})
	switch {
	case errors.Is(err, delivery.ErrInviteSent):
		funcproto.Logf(ctx, "deliveryinvite: %s already sent; acknowledged", s.DeliveryID)
		return nil
	case refused != nil:
		if rerr := j.deliveries.RecordInviteFailed(ctx, s.DeliveryID, codeOf(refused), system); rerr != nil {
			return rerr
		}
		return funcproto.Permanent(refused)
	case sent && apperr.KindOf(err) == apperr.KindGone:
		return nil // revoked while sending: the link no longer works anyway
	case err != nil:
		return err // in flight elsewhere (retried later), the provider (retried) or storage
	}
	funcproto.Logf(ctx, "deliveryinvite: %s sent by e-mail", s.DeliveryID)
	return nil
}

// compose renders the invitation, or a reminder of it, with a fresh link (the token expires
// with the session).
func (j *Job) compose(s *delivery.Session, reminder bool) (notify.Message, error) {
	tok, err := j.tokens.IssueDelivery(tokens.Delivery{DeliveryID: s.DeliveryID, ExpiresAt: s.ExpiresAt})
	if err != nil {
		return notify.Message{}, apperr.Wrap(err, apperr.KindInternal, tokens.CodeIssueFailed, "could not issue the delivery link")
	}
	to, err := j.cipher.DecryptString(s.RecipientEnc, pii.AAD(s.DeliveryID, "recipient"))
	if err != nil {
		return notify.Message{}, funcproto.Permanent(err)
	}
	kind := KindInvitation
	if reminder {
		kind = KindReminder
	}
	m := notify.DeliveryInvitationMessage(kind, to, notify.DeliveryInvitation{Locale: s.RecipientLocale,
		Name: s.RecipientName, Document: s.DocumentName, Org: s.RequesterOrg, Message: s.Message,
		Link: delivery.PortalLink(j.portalURL, s.DeliveryID, tok), Expires: s.ExpiresAt, Reminder: reminder})
	m.CorrelationID = s.CorrelationID
	return m, nil
}

// HandleInvitePoison is the DeliveryInvitePoison function: an invitation the host gave up on is
// recorded as delivery.invite_failed (retries_exhausted), unless it was sent meanwhile.
func (j *Job) HandleInvitePoison(ctx context.Context, qm funcproto.QueueMessage) error {
	var m delivery.InviteMessage
	if err := qm.Decode(&m); err != nil {
		return funcproto.Permanent(err)
	}
	s, err := j.load(ctx, m.DeliveryID, m.TenantID)
	if err != nil {
		return err
	}
	if !s.SentAt.IsZero() {
		return nil
	}
	return j.deliveries.RecordInviteFailed(ctx, s.DeliveryID, "retries_exhausted", system)
}
