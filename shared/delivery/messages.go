package delivery

import "net/url"

// Queue contracts between the dispatcher's create function (queue outputs) and the processor.
// Messages carry ids only: never an address, a token or a link.
const (
	// QueueUpload carries UploadMessage: upload the session's PDF to its library (modes
	// sharepoint and both). Poison queue: QueueUpload + "-poison".
	QueueUpload = "deliveryupload"
	// QueueInvite carries InviteMessage: send the recipient's invitation e-mail (modes
	// secure-email and both). Poison queue: QueueInvite + "-poison".
	QueueInvite = "deliveryinvite"
)

// UploadMessage asks the processor to upload one session's document.
type UploadMessage struct {
	DeliveryID string `json:"deliveryId"`
	TenantID   string `json:"tenantId"`
}

// InviteMessage asks the processor to send one session's invitation e-mail.
type InviteMessage struct {
	DeliveryID string `json:"deliveryId"`
	TenantID   string `json:"tenantId"`
}

// PortalLink is a recipient's link: {portal}/deliver/{deliveryId}?t=<delivery access token>.
func PortalLink(portal, deliveryID, token string) string {
	return portal + "/deliver/" + url.PathEscape(deliveryID) + "?t=" + url.QueryEscape(token)
}

// Messages are the queue messages a create's sessions need: each session's invitation (modes
// secure-email, both) and library upload (sharepoint, both). A replay needs none: the run that
// completed the create queued them.
func (c Created) Messages(mode Mode, tenant string) (invites []InviteMessage, uploads []UploadMessage) {
	if c.Replayed {
		return nil, nil
	}
	for _, id := range c.DeliveryIDs {
		if mode.Emails() {
			invites = append(invites, InviteMessage{DeliveryID: id, TenantID: tenant})
		}
		if mode.Uploads() {
			uploads = append(uploads, UploadMessage{DeliveryID: id, TenantID: tenant})
		}
	}
	return invites, uploads
}
