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
	p, err := a.caller(r, auth.RoleAdmin)
	if err != nil {
		return err
	}
	if err := web.NoBody(r); err != nil {
		return err
	}
	groupID, err := groupIDParam(r)
	if err != nil {
		return err
	}
	idx, err := strconv.Atoi(r.PathValue("slotIndex"))
	if err != nil || idx < 0 || idx >= esign.MaxSigners {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("slotIndex", "must be a slot number from 0 to 9"))
	}
	who := actor(r, p)
	who.Kind = "admin"
	// Check first, on a copy, that the slot may be erased (nothing changes when it may not).
	cur, curSlots, err := a.loadOwn(r.Context(), p.TenantID, groupID)
	if err != nil {
		return err
	}
	var hash string
	if idx < len(curSlots) {
		hash = curSlots[idx].EmailHash
	}
	if _, err := esign.EraseContact(cur, curSlots, idx, a.Now().UTC()); err != nil {
		return err
	}
	// Scrub the audit rows before the slot forgets the hash, so a scrub that fails can be done
	// again by a retry; and after, for rows written meanwhile.
	before, err := a.Store.ScrubEmailHash(r.Context(), cur.GroupID, hash)
	if err != nil {
		return err
	}
	s, _, _, err := a.apply(r.Context(), p.TenantID, cur.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, error) {
		ch, err := esign.EraseContact(s, slots, idx, a.Now().UTC())
		ch.By(who)
		return ch, err
	})
	if err != nil {
		return err
	}
	after, err := a.Store.ScrubEmailHash(r.Context(), s.GroupID, hash)
	if err != nil {
		return err
	}
	n := before + after
	return web.JSON(w, http.StatusOK, eraseResponse{GroupID: s.GroupID, SlotIndex: idx, Erased: true, AuditRowsClean: n})
}
