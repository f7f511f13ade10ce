// Package deliveryqueue adds the queue messages of new delivery sessions to an invocation's
// outputs: the one place the dispatcher's create and render routes and the processor's
// signed-delivery job queue invitations and uploads.
package deliveryqueue

import (
	"context"

	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/licensing"
)

// The output binding names every function that queues deliveries uses in its function.json.
const (
	BindingInvite = "invite" // queue delivery.QueueInvite
	BindingUpload = "upload" // queue delivery.QueueUpload
)

// Add adds c's messages (delivery.Created.Messages: none for a replay) to the invocation's
// outputs BindingInvite and BindingUpload, and through meter (off without LICENSING_URL) one
// delivery.created usage record per new delivery session (licensing.Binding; none for a replay).
func Add(ctx context.Context, c delivery.Created, mode delivery.Mode, tenant string, meter licensing.Meter) error {
	invites, uploads := c.Messages(mode, tenant)
	for _, m := range invites {
		if err := funcproto.AddOutput(ctx, BindingInvite, m); err != nil {
			return err
		}
	}
	for _, m := range uploads {
		if err := funcproto.AddOutput(ctx, BindingUpload, m); err != nil {
			return err
		}
	}
	if c.Replayed {
		return nil
	}
	for _, id := range c.DeliveryIDs {
		if err := meter.Add(ctx, licensing.KindDeliveryCreated, tenant, id); err != nil {
			return err
		}
	}
	return nil
}
