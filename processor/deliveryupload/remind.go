package deliveryupload

import (
	"context"
	"errors"
	"strconv"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/notify"
)

// KindReminder is the outbox/provider kind of an automatic reminder of a delivery (DESIGN 17).
const KindReminder notify.Kind = "delivery_reminder"

// Remind sends reminder m.Round of an unopened delivery (the reminder timer's step,
// delivery.Reminders.Run): the invitation again, marked as a reminder, with a fresh working
// link, under the round's own claim, recorded as delivery.reminded {reminder}. A delivery that
// was opened, downloaded, revoked or expired meanwhile, or whose round is not due, is skipped
// (nothing sent). Errors: delivery.ErrInviteSent (this round went out already);
// ErrInviteInFlight; the provider's (a refusal for good is Permanent); storage's.
func (j *Job) Remind(ctx context.Context, m delivery.ReminderMessage) error {
	s, err := j.load(ctx, m.DeliveryID, m.TenantID)
	if err != nil {
		return err
	}
	now := j.now().UTC()
	probe := *s
	if _, err := delivery.Remind(&probe, now, m.Round); err != nil {
		funcproto.Logf(ctx, "deliveryreminder: %s reminder %d not due (%s); not sent", s.DeliveryID, m.Round, s.StateAt(now))
		return nil
	}
	msg, err := j.compose(s, true)
	if err != nil {
		return err
	}
	var sent bool
	_, err = j.deliveries.SendReminder(ctx, s.DeliveryID, m.Round, InviteClaimLease, system, func() error {
		err := j.email.Send(notify.WithDedupeID(ctx, "delivery-remind-"+s.DeliveryID+"-"+strconv.Itoa(m.Round)), msg)
		sent = err == nil
		return err
	})
	switch {
	case errors.Is(err, delivery.ErrInviteSent):
		return err
	case sent && (apperr.KindOf(err) == apperr.KindGone || errors.Is(err, delivery.ErrNothingToRemind)):
		return nil // ended or opened while sending: nothing to record
	case apperr.KindOf(err) == apperr.KindInvalid:
		return funcproto.Permanent(err)
	case err != nil:
		return err
	}
	funcproto.Logf(ctx, "deliveryreminder: %s reminder %d sent by e-mail", s.DeliveryID, m.Round)
	return nil
}
