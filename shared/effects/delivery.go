package effects

import (
	"context"

	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/queues"
)

// EmitDeliveries adds c's messages (delivery.Created.Messages: none for a replay) on the
// deliveryinvite and deliveryupload queues, and through meter (off without LICENSING_URL) one
// delivery.created usage record per new delivery session (none for a replay): the one place
// the dispatcher's create and render routes and the processor's signed-delivery and
// auto-trigger jobs queue deliveries. Errors: funcproto.AddOutput's.
func EmitDeliveries(ctx context.Context, c delivery.Created, mode delivery.Mode, tenant string, meter licensing.Meter) error {
	invites, uploads := c.Messages(mode, tenant)
	outs := make([]output, 0, len(invites)+len(uploads)+len(c.DeliveryIDs))
	for _, m := range invites {
		outs = append(outs, to(queues.DeliveryInvite, m))
	}
	for _, m := range uploads {
		outs = append(outs, to(queues.DeliveryUpload, m))
	}
	if !c.Replayed {
		for _, id := range c.DeliveryIDs {
			if u, on := meter.Record(licensing.KindDeliveryCreated, tenant, id); on {
				outs = append(outs, to(queues.LicenceUsage, licensing.UsageMessage{Usage: u}))
			}
		}
	}
	return add(ctx, outs)
}

// Meter queues, when m is on, the usage record of kind for tenantID's object named by parts
// (licensing.NewUsage) on the licence-usage queue. Errors: funcproto.AddOutput's (outside an
// invocation, an undeclared binding).
func Meter(ctx context.Context, m licensing.Meter, kind licensing.Kind, tenantID string, parts ...string) error {
	u, on := m.Record(kind, tenantID, parts...)
	if !on {
		return nil
	}
	return Send(ctx, queues.LicenceUsage, licensing.UsageMessage{Usage: u})
}

// MeterGroup queues, when m is on, the usage records of kind for tenantID's objects, one named
// by each entry of names, in one licence-usage message (licensing.GroupMessage: a page of a
// batch's records made is one message, not one per record); nothing for no names. Errors:
// funcproto.AddOutput's.
func MeterGroup(ctx context.Context, m licensing.Meter, kind licensing.Kind, tenantID string, names [][]string) error {
	us, on := m.Records(kind, tenantID, names)
	if !on || len(us) == 0 {
		return nil
	}
	return Send(ctx, queues.LicenceUsage, licensing.GroupMessage(us))
}
