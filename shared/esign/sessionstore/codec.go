package sessionstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/audit"

	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/otp"
)

// Row keys inside a session's partition (PartitionKey = groupId).
const (
	rowSession   = "session"
	prefixEvent  = audit.RowPrefix
	prefixSig    = "sig-"
	prefixCallbk = "cb-"
)

func slotKey(i int) string { return fmt.Sprintf("slot%02d", i) }
func sigKey(i int) string  { return fmt.Sprintf("%s%02d", prefixSig, i) }

// sessionEntity is the session row: the session's fields and, one property per slot
// ("slot00", ...), each slot as JSON, so that a load is one point read.
func sessionEntity(s *esign.Session, slots []esign.Slot) (tablestore.Entity, error) {
	manifest, err := json.Marshal(s.Manifest)
	if err != nil {
		return tablestore.Entity{}, err
	}
	props := map[string]any{
		"tenantId": s.TenantID, "correlationId": s.CorrelationID, "documentId": s.DocumentID, "docType": s.DocType,
		"documentTitle": s.DocumentTitle, "pdfBlobPath": s.PDFBlobPath, "pdfHash": s.PDFHash, "templatePath": s.TemplatePath,
		"signingMode": string(s.SigningMode), "state": string(s.State), "cancelReason": string(s.CancelReason),
		"createdAtNs": s.CreatedAt.UnixNano(), "expiresAtNs": s.ExpiresAt.UnixNano(), "completedAtNs": nsOrZero(s.CompletedAt),
		"requestedBy": s.RequestedBy, "requestedByEmailEnc": s.RequestedByEmailEnc, "organizationName": s.OrganizationName, "thenDeliverEnc": s.ThenDeliverEnc,
		"sendPerSignerNotices": s.SendPerSignerNotices, "signedPath": s.SignedPath, "certificatePath": s.CertificatePath,
		"evidencePath": s.EvidencePath, "sealError": s.SealError, "consentVersion": s.ConsentVersion,
		"manifest": string(manifest), "manifestSource": s.ManifestSource, "slotCount": int64(len(slots)),
	}
	if s.Reminders != nil {
		b, err := json.Marshal(s.Reminders)
		if err != nil {
			return tablestore.Entity{}, err
		}
		props["reminders"] = string(b)
	}
	for i := range slots {
		b, err := json.Marshal(slotRecordOf(&slots[i]))
		if err != nil {
			return tablestore.Entity{}, err
		}
		props[slotKey(slots[i].Index)] = string(b)
	}
	return tablestore.Entity{PartitionKey: s.GroupID, RowKey: rowSession, ETag: s.ETag, Props: props}, nil
}

func sessionFrom(e tablestore.Entity) (aggregate, error) {
	s := &esign.Session{
		GroupID: e.PartitionKey, TenantID: e.String("tenantId"), CorrelationID: e.String("correlationId"),
		DocumentID: e.String("documentId"), DocType: e.String("docType"), DocumentTitle: e.String("documentTitle"),
		PDFBlobPath: e.String("pdfBlobPath"), PDFHash: e.String("pdfHash"), TemplatePath: e.String("templatePath"),
		SigningMode: esign.SigningMode(e.String("signingMode")), State: esign.SessionState(e.String("state")),
		CancelReason: esign.CancelReason(e.String("cancelReason")),
		CreatedAt:    fromNs(e.Int64("createdAtNs")), ExpiresAt: fromNs(e.Int64("expiresAtNs")), CompletedAt: fromNs(e.Int64("completedAtNs")),
		RequestedBy: e.String("requestedBy"), RequestedByEmailEnc: e.String("requestedByEmailEnc"), ThenDeliverEnc: e.String("thenDeliverEnc"),
		OrganizationName: e.String("organizationName"), SendPerSignerNotices: e.Bool("sendPerSignerNotices"),
		SignedPath: e.String("signedPath"), CertificatePath: e.String("certificatePath"), EvidencePath: e.String("evidencePath"),
		SealError: e.String("sealError"), ConsentVersion: e.String("consentVersion"), ETag: e.ETag,
		ManifestSource: e.String("manifestSource"),
	}
	if r := e.String("reminders"); r != "" {
		if err := json.Unmarshal([]byte(r), &s.Reminders); err != nil {
			return aggregate{}, corrupt(e, s, "reminders", err)
		}
	}
	if m := e.String("manifest"); m != "" && m != "null" {
		if err := json.Unmarshal([]byte(m), &s.Manifest); err != nil {
			return aggregate{}, corrupt(e, s, "manifest", err)
		}
	}
	n := int(e.Int64("slotCount"))
	slots := make([]esign.Slot, n)
	for i := range slots {
		raw := e.String(slotKey(i))
		if raw == "" {
			return aggregate{}, corrupt(e, s, slotKey(i), fmt.Errorf("missing"))
		}
		var r slotRecord
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			return aggregate{}, corrupt(e, s, slotKey(i), err)
		}
		slots[i] = r.slot(e.ETag)
		if slots[i].Index != i {
			return aggregate{}, corrupt(e, s, slotKey(i), fmt.Errorf("holds slot %d", slots[i].Index))
		}
	}
	return aggregate{s: s, slots: slots}, nil
}

// ErrCorrupt matches (errors.Is) the error of a session row whose manifest or slots do not
// decode: evidence must never be read with a gap, so a request fails (500) and the cause is
// logged once at the edge.
var ErrCorrupt = &apperr.Error{Kind: apperr.KindInternal, Code: "stored_session_corrupt", Detail: "a stored signing session could not be read"}

// CorruptError is the error of a session row that does not decode (esign.CorruptError; it
// matches ErrCorrupt).
type CorruptError = esign.CorruptError

// corrupt is the CorruptError of row e's property prop.
func corrupt(e tablestore.Entity, s *esign.Session, prop string, err error) error {
	bare := *s
	bare.Manifest = nil
	return &CorruptError{Session: &bare, Prop: prop, Cause: apperr.Wrap(fmt.Errorf("session %s %s: %w", e.PartitionKey, prop, err),
		ErrCorrupt.Kind, ErrCorrupt.Code, "%s", ErrCorrupt.Detail)}
}

// slotRecord is a slot as stored inside the session row. PII only as stored in esign.Slot
// (hash, AES-GCM ciphertext), the OTP code only as its keyed hash.
type slotRecord struct {
	Index       int                       `json:"slotIndex"`
	SessionID   string                    `json:"sessionId"`
	Role        string                    `json:"role"`
	EmailHash   string                    `json:"emailHash,omitempty"`
	EmailEnc    string                    `json:"emailEnc,omitempty"`
	PhoneEnc    string                    `json:"phoneEnc,omitempty"`
	NamePrefill string                    `json:"namePrefill,omitempty"`
	Locale      string                    `json:"locale,omitempty"`
	Condition   string                    `json:"completionCondition"`
	OTPChannel  string                    `json:"otpChannel"`
	State       string                    `json:"state"`
	Invited     bool                      `json:"invited,omitempty"`
	LinkJTI     string                    `json:"linkJti,omitempty"`
	LinkUsed    bool                      `json:"linkUsed,omitempty"`
	Generation  int                       `json:"generation,omitempty"`
	LinkGen     int                       `json:"linkGeneration,omitempty"`
	Timeline    map[string]int64          `json:"timeline,omitempty"`
	Consents    []esign.ConsentAcceptance `json:"consents,omitempty"`
	OTP         otp.Record                `json:"otp"`
	SignerName  string                    `json:"signerName,omitempty"`
	IP          string                    `json:"ip,omitempty"`
	UserAgent   string                    `json:"userAgent,omitempty"`
	InvitedAt   int64                     `json:"invitedAtNs,omitempty"`
	Reminders   int                       `json:"reminders,omitempty"`
	RemindedAt  int64                     `json:"remindedAtNs,omitempty"`
}

func slotRecordOf(sl *esign.Slot) slotRecord {
	tl := make(map[string]int64, len(sl.Timeline))
	for st, at := range sl.Timeline {
		tl[string(st)] = at.UnixNano()
	}
	return slotRecord{Index: sl.Index, SessionID: sl.SessionID, Role: sl.Role, EmailHash: sl.EmailHash, EmailEnc: sl.EmailEnc,
		PhoneEnc: sl.PhoneEnc, NamePrefill: sl.NamePrefill, Locale: sl.Locale, Condition: string(sl.Condition), OTPChannel: string(sl.OTPChannel),
		State: string(sl.State), Invited: sl.Invited, LinkJTI: sl.LinkJTI, LinkUsed: sl.LinkUsed, Generation: sl.Generation,
		LinkGen: sl.LinkGeneration, Timeline: tl, Consents: sl.Consents, SignerName: sl.SignerName, IP: sl.IP, UserAgent: sl.UserAgent,
		OTP: sl.OTP.Stored(), InvitedAt: nsOrZero(sl.InvitedAt), Reminders: sl.Reminders, RemindedAt: nsOrZero(sl.RemindedAt)}
}

func (r slotRecord) slot(etag string) esign.Slot {
	sl := esign.Slot{Index: r.Index, SessionID: r.SessionID, Role: r.Role, EmailHash: r.EmailHash, EmailEnc: r.EmailEnc,
		PhoneEnc: r.PhoneEnc, NamePrefill: r.NamePrefill, Locale: r.Locale, Condition: esign.Condition(r.Condition),
		OTPChannel: esign.OTPChannel(r.OTPChannel), State: esign.SlotState(r.State), Invited: r.Invited, LinkJTI: r.LinkJTI,
		LinkUsed: r.LinkUsed, Generation: r.Generation, LinkGeneration: r.LinkGen, Consents: r.Consents, SignerName: r.SignerName, IP: r.IP,
		UserAgent: r.UserAgent, ETag: etag, Timeline: make(map[esign.SlotState]time.Time, len(r.Timeline)),
		OTP: r.OTP.State(), InvitedAt: fromNs(r.InvitedAt), Reminders: r.Reminders, RemindedAt: fromNs(r.RemindedAt)}
	for st, ns := range r.Timeline {
		sl.Timeline[esign.SlotState(st)] = fromNs(ns)
	}
	return sl
}

// AuditEvent is one stored audit event, as the status timeline and the evidence bundle read it.
type AuditEvent = audit.Record

func nsOrZero(t time.Time) int64 { return audit.Nanos(t) }

func fromNs(ns int64) time.Time { return audit.FromNanos(ns) }
