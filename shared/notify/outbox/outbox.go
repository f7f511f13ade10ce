// Package outbox is the local default e-mail and SMS provider (DESIGN 1a): instead of reaching a
// mail server or an SMS gateway, every message becomes one row of an Azure (Azurite) table named
// "outbox", where tests, scripts and a developer can read it.
//
// The outbox stands in for a mail server, so it is the one place where the recipient's address
// is written in clear: exactly as a real provider would receive it. It is a development and test
// provider; production configurations choose the operator's service, Communication Services or
// SMTP. Nothing here logs, and no error carries the address or the body.
//
// Rows: PartitionKey is the UTC date of sending ("2006-01-02"), RowKey the send time in unix
// nanoseconds (20 digits, strictly increasing within one process) followed by a random suffix,
// so rows read back in send order and two processes sending in the same nanosecond cannot
// collide. Columns: channel, kind, recipient, subject,
// text, html, correlationId, sentAt.
package outbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/notify"
)

// DefaultTable is the outbox table's name (DESIGN 1a).
const DefaultTable = "outbox"

// Row is one message as the outbox stored it.
type Row struct {
	Key           string // PartitionKey/RowKey, unique and in send order
	Channel       notify.Channel
	Kind          notify.Kind
	Recipient     string
	Subject       string
	Text          string
	HTML          string
	CorrelationID string
	SentAt        time.Time
}

// Outbox writes messages to its table. It is safe for concurrent use.
type Outbox struct {
	t    *tablestore.Store
	now  func() time.Time
	last atomic.Int64 // last RowKey time used, so keys of one process strictly increase
}

var _ notify.Sender = (*Outbox)(nil)

// New opens the outbox on table (DefaultTable when empty) of the account. It does no I/O;
// call Ensure once to create the table.
func New(acct *azconn.Account, table string) (*Outbox, error) {
	if table == "" {
		table = DefaultTable
	}
	t, err := tablestore.New(acct, table)
	if err != nil {
		return nil, err
	}
	return &Outbox{t: t, now: time.Now}, nil
}

// Ensure creates the table when missing. Errors: the tablestore ones.
func (o *Outbox) Ensure(ctx context.Context) error { return o.t.EnsureTable(ctx) }

// Send stores m as one row. Errors: KindInvalid (code invalid_message) when m fails
// notify.Message.Validate; otherwise the tablestore errors (KindInternal when storage fails, which
// callers treat as worth retrying).
func (o *Outbox) Send(ctx context.Context, m notify.Message) error {
	if err := m.Validate(); err != nil {
		return apperr.Wrap(err, apperr.KindInvalid, apperr.CodeInvalidMessage, "the %s message is incomplete", m.Kind)
	}
	at := o.stamp()
	var tail [6]byte
	if _, err := rand.Read(tail[:]); err != nil {
		return err
	}
	e := tablestore.Entity{
		PartitionKey: at.Format(time.DateOnly),
		RowKey:       fmt.Sprintf("%020d-%s", at.UnixNano(), hex.EncodeToString(tail[:])),
		Props: map[string]any{
			"channel": string(m.Channel), "kind": string(m.Kind), "recipient": m.To,
			"subject": m.Subject, "text": m.Text, "html": m.HTML,
			"correlationId": m.CorrelationID, "sentAt": at,
		},
	}
	_, err := o.t.Insert(ctx, e)
	return err
}

// stamp is the send time, moved forward by a nanosecond when it would not be after the previous
// one: messages sent by one process sort in the order Send was called even within a nanosecond.
func (o *Outbox) stamp() time.Time {
	for {
		at := o.now().UTC()
		last := o.last.Load()
		if at.UnixNano() <= last {
			at = time.Unix(0, last+1).UTC()
		}
		if o.last.CompareAndSwap(last, at.UnixNano()) {
			return at
		}
	}
}

// List returns every stored message in send order. It is meant for tests and scripts (it reads
// the whole table). Errors: the tablestore ones.
func (o *Outbox) List(ctx context.Context) ([]Row, error) {
	var rows []Row
	err := o.t.Each(ctx, "", nil, func(e tablestore.Entity) error {
		rows = append(rows, rowFrom(e))
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Key < rows[j].Key })
	return rows, nil
}

func rowFrom(e tablestore.Entity) Row {
	return Row{
		Key:     e.PartitionKey + "/" + e.RowKey,
		Channel: notify.Channel(e.String("channel")), Kind: notify.Kind(e.String("kind")),
		Recipient: e.String("recipient"), Subject: e.String("subject"), Text: e.String("text"),
		HTML: e.String("html"), CorrelationID: e.String("correlationId"), SentAt: e.Time("sentAt"),
	}
}
