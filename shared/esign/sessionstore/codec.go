package sessionstore

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
)

// Row keys inside a session's partition (PartitionKey = groupId).
const (
	rowSession   = "session"
	prefixSlot   = "slot-"
	prefixEvent  = "evt-"
	prefixSig    = "sig-"
	prefixCallbk = "cb-"
)

func slotKey(i int) string { return fmt.Sprintf("%s%02d", prefixSlot, i) }
func sigKey(i int) string  { return fmt.Sprintf("%s%02d", prefixSig, i) }

// eventKey sorts events by time, then by their order in one change; the random tail keeps two
// changes stamped with the same nanosecond from colliding.
func eventKey(at time.Time, seq int) string {
	var tail [4]byte
	_, _ = rand.Read(tail[:])
	return fmt.Sprintf("%s%020d-%04d-%x", prefixEvent, at.UnixNano(), seq, tail)
}

func sessionEntity(s *esign.Session) tablestore.Entity {
	manifest, _ := json.Marshal(s.Manifest) // plain structs: cannot fail
	return tablestore.Entity{PartitionKey: s.GroupID, RowKey: rowSession, ETag: s.ETag, Props: map[string]any{
		"tenantId": s.TenantID, "correlationId": s.CorrelationID, "documentId": s.DocumentID, "docType": s.DocType,
		"pdfBlobPath": s.PDFBlobPath, "pdfHash": s.PDFHash, "templatePath": s.TemplatePath,
		"signingMode": string(s.SigningMode), "state": string(s.State), "cancelReason": string(s.CancelReason),
		"createdAtNs": s.CreatedAt.UnixNano(), "expiresAtNs": s.ExpiresAt.UnixNano(), "completedAtNs": nsOrZero(s.CompletedAt),
		"requestedBy": s.RequestedBy, "requestedByEmailEnc": s.RequestedByEmailEnc, "organizationName": s.OrganizationName,
		"sendPerSignerNotices": s.SendPerSignerNotices, "signedPath": s.SignedPath, "certificatePath": s.CertificatePath,
		"evidencePath": s.EvidencePath, "sealError": s.SealError, "consentVersion": s.ConsentVersion,
		"manifest": string(manifest), "manifestSource": s.ManifestSource,
	}}
}

func sessionFrom(e tablestore.Entity) *esign.Session {
	s := &esign.Session{
		GroupID: e.PartitionKey, TenantID: e.String("tenantId"), CorrelationID: e.String("correlationId"),
		DocumentID: e.String("documentId"), DocType: e.String("docType"), PDFBlobPath: e.String("pdfBlobPath"),
		PDFHash: e.String("pdfHash"), TemplatePath: e.String("templatePath"),
		SigningMode: esign.SigningMode(e.String("signingMode")), State: esign.SessionState(e.String("state")),
		CancelReason: esign.CancelReason(e.String("cancelReason")),
		CreatedAt:    fromNs(e.Int64("createdAtNs")), ExpiresAt: fromNs(e.Int64("expiresAtNs")), CompletedAt: fromNs(e.Int64("completedAtNs")),
		RequestedBy: e.String("requestedBy"), RequestedByEmailEnc: e.String("requestedByEmailEnc"),
		OrganizationName: e.String("organizationName"), SendPerSignerNotices: e.Bool("sendPerSignerNotices"),
		SignedPath: e.String("signedPath"), CertificatePath: e.String("certificatePath"), EvidencePath: e.String("evidencePath"),
		SealError: e.String("sealError"), ConsentVersion: e.String("consentVersion"), ETag: e.ETag,
		ManifestSource: e.String("manifestSource"),
	}
	if m := e.String("manifest"); m != "" && m != "null" {
		_ = json.Unmarshal([]byte(m), &s.Manifest) // written by sessionEntity above
	}
	return s
}

func slotEntity(groupID string, sl *esign.Slot) (tablestore.Entity, error) {
	timeline := map[string]int64{}
	for st, at := range sl.Timeline {
		timeline[string(st)] = at.UnixNano()
	}
	tl, err := json.Marshal(timeline)
	if err != nil {
		return tablestore.Entity{}, err
	}
	consents, err := json.Marshal(sl.Consents)
	if err != nil {
		return tablestore.Entity{}, err
	}
	otp, err := json.Marshal(otpRecord{Channel: sl.OTP.Channel, Destination: sl.OTP.Destination,
		CodeHash: sl.OTP.CodeHash, SentAtNs: nsOrZero(sl.OTP.SentAt), ExpiresAtNs: nsOrZero(sl.OTP.ExpiresAt),
		Attempts: sl.OTP.Attempts, Locks: sl.OTP.Locks, Blocked: sl.OTP.Blocked,
		VerifiedAtNs: nsOrZero(sl.OTP.VerifiedAt), VerifiedGen: sl.OTP.VerifiedGen})
	if err != nil {
		return tablestore.Entity{}, err
	}
	return tablestore.Entity{PartitionKey: groupID, RowKey: slotKey(sl.Index), ETag: sl.ETag, Props: map[string]any{
		"slotIndex": int64(sl.Index), "sessionId": sl.SessionID, "role": sl.Role, "emailHash": sl.EmailHash,
		"emailEnc": sl.EmailEnc, "phoneEnc": sl.PhoneEnc, "namePrefill": sl.NamePrefill,
		"completionCondition": string(sl.Condition), "otpChannel": string(sl.OTPChannel), "state": string(sl.State),
		"invited": sl.Invited, "linkJti": sl.LinkJTI, "linkUsed": sl.LinkUsed, "generation": int64(sl.Generation),
		"timeline": string(tl), "consents": string(consents), "otp": string(otp), "signerName": sl.SignerName, "ip": sl.IP, "userAgent": sl.UserAgent,
	}}, nil
}

func slotFrom(e tablestore.Entity) (esign.Slot, error) {
	sl := esign.Slot{
		Index: int(e.Int64("slotIndex")), SessionID: e.String("sessionId"), Role: e.String("role"),
		EmailHash: e.String("emailHash"), EmailEnc: e.String("emailEnc"), PhoneEnc: e.String("phoneEnc"),
		NamePrefill: e.String("namePrefill"), Condition: esign.Condition(e.String("completionCondition")),
		OTPChannel: esign.OTPChannel(e.String("otpChannel")), State: esign.SlotState(e.String("state")),
		Invited: e.Bool("invited"), LinkJTI: e.String("linkJti"), LinkUsed: e.Bool("linkUsed"),
		Generation: int(e.Int64("generation")), SignerName: e.String("signerName"), IP: e.String("ip"),
		UserAgent: e.String("userAgent"), ETag: e.ETag, Timeline: map[esign.SlotState]time.Time{},
	}
	var tl map[string]int64
	if s := e.String("timeline"); s != "" {
		if err := json.Unmarshal([]byte(s), &tl); err != nil {
			return sl, fmt.Errorf("sessionstore: slot %s timeline: %w", e.RowKey, err)
		}
	}
	if s := e.String("consents"); s != "" && s != "null" {
		if err := json.Unmarshal([]byte(s), &sl.Consents); err != nil {
			return sl, fmt.Errorf("sessionstore: slot %s consents: %w", e.RowKey, err)
		}
	}
	if s := e.String("otp"); s != "" {
		var o otpRecord
		if err := json.Unmarshal([]byte(s), &o); err != nil {
			return sl, fmt.Errorf("sessionstore: slot %s otp: %w", e.RowKey, err)
		}
		sl.OTP = esign.OTPState{Channel: o.Channel, Destination: o.Destination, CodeHash: o.CodeHash,
			SentAt: fromNs(o.SentAtNs), ExpiresAt: fromNs(o.ExpiresAtNs), Attempts: o.Attempts, Locks: o.Locks,
			Blocked: o.Blocked, VerifiedAt: fromNs(o.VerifiedAtNs), VerifiedGen: o.VerifiedGen}
	}
	for st, ns := range tl {
		sl.Timeline[esign.SlotState(st)] = fromNs(ns)
	}
	return sl, nil
}

// otpRecord is a slot's OTP state as stored (the code only as its keyed hash).
type otpRecord struct {
	Channel      string `json:"channel,omitempty"`
	Destination  string `json:"destination,omitempty"`
	CodeHash     string `json:"codeHash,omitempty"`
	SentAtNs     int64  `json:"sentAtNs,omitempty"`
	ExpiresAtNs  int64  `json:"expiresAtNs,omitempty"`
	Attempts     int    `json:"attempts,omitempty"`
	Locks        int    `json:"locks,omitempty"`
	Blocked      bool   `json:"blocked,omitempty"`
	VerifiedAtNs int64  `json:"verifiedAtNs,omitempty"`
	VerifiedGen  int    `json:"verifiedGen,omitempty"`
}

// AuditEvent is one stored audit event, as the status timeline and the evidence bundle read it.
type AuditEvent struct {
	Seq       string         `json:"-"`
	Kind      string         `json:"kind"`
	At        time.Time      `json:"at"`
	Slot      int            `json:"slot"`
	ActorKind string         `json:"actorKind"`
	ActorID   string         `json:"actorId,omitempty"`
	IP        string         `json:"ip,omitempty"`
	UserAgent string         `json:"userAgent,omitempty"`
	EmailHash string         `json:"emailHash,omitempty"`
	Data      map[string]any `json:"data,omitempty"`
}

func eventEntity(groupID string, ev esign.Event, seq int, emailHash string) (tablestore.Entity, error) {
	data := "{}"
	if len(ev.Data) > 0 {
		b, err := json.Marshal(ev.Data)
		if err != nil {
			return tablestore.Entity{}, fmt.Errorf("sessionstore: event %s data: %w", ev.Kind, err)
		}
		data = string(b)
	}
	return tablestore.Entity{PartitionKey: groupID, RowKey: eventKey(ev.At, seq), Props: map[string]any{
		"kind": ev.Kind, "atNs": ev.At.UnixNano(), "at": ev.At.UTC().Format(time.RFC3339Nano), "slot": int64(ev.Slot),
		"actorKind": ev.Actor.Kind, "actorId": ev.Actor.ID, "ip": ev.Actor.IP, "userAgent": ev.Actor.UserAgent,
		"emailHash": emailHash, "data": data,
	}}, nil
}

func eventFrom(e tablestore.Entity) AuditEvent {
	ev := AuditEvent{
		Seq: e.RowKey, Kind: e.String("kind"), At: fromNs(e.Int64("atNs")), Slot: int(e.Int64("slot")),
		ActorKind: e.String("actorKind"), ActorID: e.String("actorId"), IP: e.String("ip"),
		UserAgent: e.String("userAgent"), EmailHash: e.String("emailHash"),
	}
	if d := e.String("data"); d != "" && d != "{}" {
		_ = json.Unmarshal([]byte(d), &ev.Data)
	}
	return ev
}

func nsOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNs(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
