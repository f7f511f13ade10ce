// Package jobmsg holds the queue messages one processor job writes and another reads, so that
// no job package imports another: the seal job queues a PortalPurge for the portal purge job,
// and the workflow seal job a WorkflowCallback for the callback job (which re-queues its own
// retries). The JSON of each is the wire format of messages already on the queues.
package jobmsg

// Queue names (processor/functions/<Name>/function.json triggers, infra/main.bicep).
const (
	QueuePortalPurge       = "portalpurge"
	QueuePortalPurgePoison = "portalpurge-poison"
	QueueWorkflowCallback  = "workflow-callback"
)

// PortalPurge is the portal purge queue's message: the session to purge at the portal.
type PortalPurge struct {
	GroupID  string `json:"groupId"`
	TenantID string `json:"tenantId"`
}

// WorkflowCallback names the ended workflow whose callback to post, and the attempt (1 for the
// first; 0 reads as 1).
type WorkflowCallback struct {
	WorkflowID string `json:"workflowId"`
	TenantID   string `json:"tenantId"`
	Attempt    int    `json:"attempt,omitempty"`
}
