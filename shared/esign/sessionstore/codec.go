package sessionstore

import (
	"encoding/json"
	"fmt"
	"github.com/esign-svc/esign/shared/audit"
	"time"

	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
)

// Row keys inside a session's partition (PartitionKey = groupId).
const (
	rowSession   = "session"
	prefixSlot   = "slot-"
	prefixEvent  = audit.RowPrefix
	prefixSig    = "sig-"
	prefixCallbk = "cb-"
)

func slotKey(i int) string { return fmt.Sprintf("%s%02d", prefixSlot, i) }
func sigKey(i int) string  { return fmt.Sprintf("%s%02d", prefixSig, i) }

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
type AuditEvent = audit.Record

func eventEntity(groupID string, ev esign.Event, seq int, emailHash string) (tablestore.Entity, error) {
	return audit.Entity(groupID, audit.Record{Kind: ev.Kind, At: ev.At, Slot: ev.Slot, ActorKind: ev.Actor.Kind,
		ActorID: ev.Actor.ID, IP: ev.Actor.IP, UserAgent: ev.Actor.UserAgent, EmailHash: emailHash, Data: ev.Data}, seq)
}

func eventFrom(e tablestore.Entity) AuditEvent { return audit.FromEntity(e) }

func nsOrZero(t time.Time) int64 { return audit.Nanos(t) }

func fromNs(ns int64) time.Time { return audit.FromNanos(ns) }
