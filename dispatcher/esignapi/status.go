package esignapi

import (
	"net/http"
	"time"

	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/web"
)

type slotStatus struct {
	SlotIndex           int               `json:"slotIndex"`
	SessionID           string            `json:"sessionId"`
	Role                string            `json:"role"`
	Email               string            `json:"email,omitempty"` // decrypted for the owning tenant; absent once erased
	NamePrefill         string            `json:"namePrefill,omitempty"`
	CompletionCondition string            `json:"completionCondition"`
	OTPChannel          string            `json:"otpChannel"`
	State               string            `json:"state"`
	Invited             bool              `json:"invited"`
	Timeline            map[string]string `json:"timeline"` // state -> RFC 3339 with nanoseconds
	SignerName          string            `json:"signerName,omitempty"`

	// Reminders counts the automatic reminders sent so far (DESIGN 17); LastRemindedAt is the
	// latest one's time.
	Reminders      int    `json:"reminders"`
	LastRemindedAt string `json:"lastRemindedAt,omitempty"`
}

type eventStatus struct {
	Kind string `json:"kind"`
	At   string `json:"at"`
	Slot *int   `json:"slot,omitempty"`
}

type statusResponse struct {
	GroupID            string        `json:"groupId"`
	CorrelationID      string        `json:"correlationId"`
	DocumentID         string        `json:"documentId"`
	DocType            string        `json:"docType"`
	PDFBlobPath        string        `json:"pdfBlobPath"`
	PDFHash            string        `json:"pdfHash"`
	SigningMode        string        `json:"signingMode"`
	State              string        `json:"state"`
	CancelReason       string        `json:"cancelReason,omitempty"`
	CreatedAt          string        `json:"createdAt"`
	ExpiresAt          string        `json:"expiresAt"`
	CompletedAt        string        `json:"completedAt,omitempty"`
	SignedDocumentPath string        `json:"signedDocumentPath,omitempty"`
	CertificatePath    string        `json:"certificatePath,omitempty"`
	EvidencePath       string        `json:"evidencePath,omitempty"`
	SealError          string        `json:"sealError,omitempty"`
	ManifestSource     string        `json:"manifestSource"`
	Slots              []slotStatus  `json:"slots"`
	Events             []eventStatus `json:"events"`

	// Reminders is the session's reminders block (absent: none).
	Reminders *esign.ReminderPolicy `json:"reminders,omitempty"`
}

// status is GET /api/esign/session/{correlationId}/status: the tenant's latest session for the
// correlationId, its slots with the time of each transition, and the audit timeline (kinds and
// times only).
func (a *API) status(w http.ResponseWriter, r *http.Request) error {
	p, err := a.caller(r, auth.RoleInitiator, auth.RoleAdmin)
	if err != nil {
		return err
	}
	if err := web.NoBody(r); err != nil {
		return err
	}
	st, err := a.Reads.StatusByCorrelation(r.Context(), p.TenantID, r.PathValue("correlationId"))
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, statusOf(st))
}

// statusByGroup is GET /api/esign/session/by-group/{groupId}/status: the same answer as status,
// for the session the groupId names (spec: the groupId is used to poll status). Same roles;
// another tenant's session is 404 session_not_found, as an unknown one. Errors: 400
// invalid_request (field groupId) for a groupId that is not a UUID; 401; 403; 404.
func (a *API) statusByGroup(w http.ResponseWriter, r *http.Request) error {
	p, groupID, err := a.sessionCaller(r, auth.RoleInitiator, auth.RoleAdmin)
	if err != nil {
		return err
	}
	st, err := a.Reads.Status(r.Context(), p.TenantID, groupID)
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, statusOf(st))
}

// statusOf is the status answer of a session the caller's tenant owns (esign.SessionReads).
func statusOf(st esign.SessionStatus) statusResponse {
	s := st.Session
	resp := statusResponse{
		GroupID: s.GroupID, CorrelationID: s.CorrelationID, DocumentID: s.DocumentID, DocType: s.DocType,
		PDFBlobPath: s.PDFBlobPath, PDFHash: s.PDFHash, SigningMode: string(s.SigningMode), State: string(st.State),
		CancelReason: string(s.CancelReason), CreatedAt: ts(s.CreatedAt), ExpiresAt: ts(s.ExpiresAt), CompletedAt: ts(s.CompletedAt),
		SignedDocumentPath: s.SignedPath, CertificatePath: s.CertificatePath, EvidencePath: s.EvidencePath,
		SealError: s.SealError, ManifestSource: s.ManifestSource, Reminders: s.Reminders,
	}
	for i := range st.Slots {
		sl := &st.Slots[i]
		ss := slotStatus{SlotIndex: sl.Index, SessionID: sl.SessionID, Role: sl.Role, Email: st.Emails[i], NamePrefill: sl.NamePrefill,
			CompletionCondition: string(sl.Condition), OTPChannel: string(sl.OTPChannel), State: string(sl.State),
			Invited: sl.Invited, Timeline: map[string]string{}, SignerName: sl.SignerName,
			Reminders: sl.Reminders, LastRemindedAt: ts(sl.RemindedAt)}
		for state, at := range sl.Timeline {
			ss.Timeline[string(state)] = ts(at)
		}
		resp.Slots = append(resp.Slots, ss)
	}
	for _, e := range st.Events {
		ev := eventStatus{Kind: e.Kind, At: ts(e.At)}
		if e.Slot >= 0 {
			slot := e.Slot
			ev.Slot = &slot
		}
		resp.Events = append(resp.Events, ev)
	}
	return resp
}

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
