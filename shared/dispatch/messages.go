package dispatch

import (
	"strconv"

	"github.com/esign-svc/esign/shared/pii"
)

// Queues between the dispatcher and the processor (DESIGN 9). Each has a poison queue
// "<name>-poison". Messages carry ids only, never an address or a record's data.
const (
	// QueueDispatch (low priority) carries BatchMessage: the processor moves a queued batch to
	// processing and fans out its records (in pages: a message with From > 0 continues).
	QueueDispatch = "dispatch"
	// QueueRecord carries RecordMessage: render, store and deliver a group of records.
	QueueRecord = "dispatch-record"
	// QueueFinish carries BatchMessage: the last record was processed; merge, bundle, finish.
	QueueFinish = "dispatch-finish"
	// QueueNotify carries NotifyMessage: the approvers' and the submitter's e-mails.
	QueueNotify = "dispatch-notify"
)

// BatchMessage names a batch; From is the first record index a fan-out page starts at.
type BatchMessage struct {
	BatchID  string `json:"batchId"`
	TenantID string `json:"tenantId"`
	From     int    `json:"from,omitempty"`
}

// RecordsPerMessage is how many records one RecordMessage of a batch stored now names at most:
// consecutive record groups (index / Batch.Group()), so that one record job renders them with
// one template read and writes their outcomes with one counter shard in one transaction (issue
// 26: 25 records, 51 of a transaction's 100 rows; a batch stored with groups of 10 keeps them).
const RecordsPerMessage = 25

// LegacyRecordsPerMessage is the group of a batch stored before its row recorded one.
const LegacyRecordsPerMessage = 10

// RecordMessage names records of a batch: Indexes (ascending, of one of the batch's groups), or,
// in a message without them (before issue 26), the one record Index.
type RecordMessage struct {
	BatchID  string `json:"batchId"`
	TenantID string `json:"tenantId"`
	Index    int    `json:"index"`
	Indexes  []int  `json:"indexes,omitempty"`
}

// Records are the indexes the message names.
func (m RecordMessage) Records() []int {
	if len(m.Indexes) > 0 {
		return m.Indexes
	}
	return []int{m.Index}
}

// Notice kinds of NotifyMessage.
const (
	NoticeApprovers = "approvers" // pending-approval: the batch summary to the approvers
	NoticeFinished  = "finished"  // completed or partially-failed: to the submitter
)

// NotifyMessage asks the processor to send a batch's notice of Kind.
type NotifyMessage struct {
	BatchID  string `json:"batchId"`
	TenantID string `json:"tenantId"`
	Kind     string `json:"kind"`
}

// AAD binds an encrypted value of a batch to its batch and place: the record's data
// ("record", index), the approvers ("approvers"), the submitter ("submitter").
func RecordAAD(batchID string, index int) []byte {
	return pii.AAD(batchID, "record", strconv.Itoa(index))
}

// ApproversAAD binds Batch.ApproversEnc (the approvers' addresses, JSON array) to its batch.
func ApproversAAD(batchID string) []byte { return pii.AAD(batchID, "approvers") }

// SubmitterAAD binds Batch.SubmitterEmailEnc to its batch.
func SubmitterAAD(batchID string) []byte { return pii.AAD(batchID, "submitter") }
