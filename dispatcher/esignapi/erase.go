package esignapi

import (
	"net/http"
	"strconv"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/web"
)

type eraseResponse struct {
	GroupID        string `json:"groupId"`
	SlotIndex      int    `json:"slotIndex"`
	Erased         bool   `json:"erased"`
	AuditRowsClean int    `json:"auditRowsScrubbed"`
}

// eraseEmail is DELETE /api/esign/session/{groupId}/slots/{slotIndex}/email (Service.Admin):
// deletes the signer's e-mail hash and encrypted e-mail (and phone) from the slot, cuts the
// hash out of the session's audit rows (wherever a row holds it, its data JSON included), and
// records pii.erased. The sealed PDF and evidence
// bundle are signed legal records and are not rewritten (see the README).
func (a *API) eraseEmail(w http.ResponseWriter, r *http.Request) error {
	p, groupID, err := a.sessionCaller(r, auth.RoleAdmin)
	if err != nil {
		return err
	}
	idx, err := strconv.Atoi(r.PathValue("slotIndex"))
	if err != nil || idx < 0 || idx >= esign.MaxSigners {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("slotIndex", "must be a slot number from 0 to 9"))
	}
	who := actor(r, p)
	who.Kind = "admin"
	s, n, err := a.Sessions.EraseEmail(r.Context(), p.TenantID, groupID, idx, who)
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, eraseResponse{GroupID: s.GroupID, SlotIndex: idx, Erased: true, AuditRowsClean: n})
}
