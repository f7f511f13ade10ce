package esignapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/dispatcher/effects"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/web"
)

// Containers request paths may name.
const (
	ContainerDocuments = "documents"
	ContainerTemplates = "templates"
)

type createdSlot struct {
	SlotIndex int    `json:"slotIndex"`
	SessionID string `json:"sessionId"`
	PortalURL string `json:"portalUrl"`
}

type createResponse struct {
	GroupID       string        `json:"groupId"`
	CorrelationID string        `json:"correlationId"`
	State         string        `json:"state"`
	ExpiresAt     string        `json:"expiresAt"`
	Slots         []createdSlot `json:"slots"`
}

// create is POST /api/esign/session.
func (a *API) create(w http.ResponseWriter, r *http.Request) error {
	p, err := a.caller(r, auth.RoleInitiator)
	if err != nil {
		return err
	}
	var req esign.CreateRequest
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	req.Normalize()
	src, err := blobstore.ParseFieldPath("pdfBlobPath", req.PDFBlobPath)
	if err != nil {
		return err
	}
	if err := src.RequireContainer("pdfBlobPath", ContainerDocuments); err != nil {
		return err
	}
	manifest, source, err := a.resolveManifest(r.Context(), src, req.TemplatePath, req.PDFHash)
	if err != nil {
		return err
	}

	now := a.Now().UTC()
	s := &esign.Session{
		GroupID: uuid.NewString(), TenantID: p.TenantID, CorrelationID: req.CorrelationID, DocumentID: req.DocumentID,
		DocType: req.DocType, PDFBlobPath: src.String(), PDFHash: req.PDFHash, TemplatePath: req.TemplatePath,
		SigningMode: req.SigningMode, State: esign.SessionPending, CreatedAt: now,
		ExpiresAt:   now.Add(time.Duration(*req.ExpiresInMinutes) * time.Minute),
		RequestedBy: req.RequestedBy, OrganizationName: req.OrganizationName, SendPerSignerNotices: *req.SendPerSignerNotices,
		ConsentVersion: esign.ConsentVersion, Manifest: manifest, ManifestSource: source,
	}
	if req.RequestedByEmail != "" {
		if s.RequestedByEmailEnc, err = a.Cipher.EncryptString(req.RequestedByEmail, pii.AAD(s.GroupID, "requestedBy")); err != nil {
			return apperr.Wrap(err, apperr.KindInternal, pii.CodeEncrypt, "could not protect the requester's address")
		}
	}
	slots, err := a.newSlots(s.GroupID, req.Signers)
	if err != nil {
		return err
	}
	ch := esign.Start(s, slots, now)
	ch.By(actor(r, p))
	if err := a.Store.Create(r.Context(), s, slots, ch, now); err != nil {
		return err
	}
	if err := effects.Emit(r.Context(), s, slots, ch, false); err != nil {
		return err
	}
	resp := createResponse{GroupID: s.GroupID, CorrelationID: s.CorrelationID, State: string(s.State),
		ExpiresAt: s.ExpiresAt.Format(time.RFC3339Nano)}
	for i := range slots {
		link, err := a.portalLink(s, &slots[i])
		if err != nil {
			return err
		}
		resp.Slots = append(resp.Slots, createdSlot{SlotIndex: i, SessionID: slots[i].SessionID, PortalURL: link})
	}
	w.Header().Set("Location", "/api/esign/session/"+s.CorrelationID+"/status")
	return web.JSON(w, http.StatusCreated, resp)
}

// checkHash streams the named blob through SHA-256 and compares it with the request's pdfHash.
// With keep it also returns the blob's bytes (at most maxPDFBytes, 413 beyond), read in the
// same pass, for the callers that need the PDF itself.
func (a *API) checkHash(ctx context.Context, src blobstore.Path, want string, keep bool) ([]byte, error) {
	var got string
	var pdf []byte
	var err error
	if keep {
		pdf, got, err = a.readHashed(ctx, src)
	} else {
		got, _, err = a.Blobs.HashSHA256(ctx, src.Container, src.Name)
	}
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, apperr.Invalid(pdfdoc.CodeNotFound, apperr.Field("pdfBlobPath", "no blob at this path"))
	}
	if err != nil {
		return nil, err
	}
	if "sha256:"+got != want {
		return nil, apperr.Invalid("pdf_hash_mismatch", apperr.Field("pdfHash", "does not match the SHA-256 of the blob at pdfBlobPath"))
	}
	return pdf, nil
}

// readHashed reads the whole blob once, hashing it as it streams in.
func (a *API) readHashed(ctx context.Context, src blobstore.Path) ([]byte, string, error) {
	rc, props, err := a.Blobs.Open(ctx, src.Container, src.Name)
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	if props.Size > maxPDFBytes {
		return nil, "", apperr.New(apperr.KindTooLarge, "document_too_large", "the document is larger than %d bytes", int64(maxPDFBytes))
	}
	h := sha256.New()
	buf := bytes.NewBuffer(make([]byte, 0, props.Size))
	if _, err := io.Copy(buf, io.TeeReader(io.LimitReader(rc, maxPDFBytes), h)); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), hex.EncodeToString(h.Sum(nil)), nil
}

// newSlots builds the slots in slotIndex order with their ids, protected e-mail and phone,
// and each slot's first single-use link id.
func (a *API) newSlots(groupID string, signers []esign.SignerRequest) ([]esign.Slot, error) {
	sorted := append([]esign.SignerRequest(nil), signers...)
	sort.Slice(sorted, func(i, j int) bool { return *sorted[i].SlotIndex < *sorted[j].SlotIndex })
	slots := make([]esign.Slot, len(sorted))
	for i, sg := range sorted {
		idx := strconv.Itoa(i)
		enc, err := a.Cipher.EncryptString(sg.Email, pii.AAD(groupID, "slot", idx))
		if err != nil {
			return nil, apperr.Wrap(err, apperr.KindInternal, pii.CodeEncrypt, "could not protect a signer's address")
		}
		var phone string
		if sg.PhoneNumber != "" {
			if phone, err = a.Cipher.EncryptString(sg.PhoneNumber, pii.AAD(groupID, "phone", idx)); err != nil {
				return nil, apperr.Wrap(err, apperr.KindInternal, pii.CodeEncrypt, "could not protect a signer's phone number")
			}
		}
		slots[i] = esign.Slot{
			Index: i, SessionID: uuid.NewString(), Role: sg.Role, EmailHash: a.Hasher.Email(sg.Email), EmailEnc: enc,
			PhoneEnc: phone, NamePrefill: sg.NamePrefill, Condition: sg.CompletionCondition, OTPChannel: sg.OTPChannel,
			LinkJTI: uuid.NewString(),
		}
	}
	return slots, nil
}
