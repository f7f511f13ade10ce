package esign

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/tokens"
)

// Containers a create request's paths may name (DESIGN 1a).
const (
	ContainerDocuments = "documents"
	ContainerTemplates = "templates"
	ContainerSigned    = "signed" // only for a Sealed request, under the tenant's folder
)

// SessionCreator stores a new session (sessionstore.Store).
type SessionCreator interface {
	Create(ctx context.Context, s *Session, slots []Slot, ch Change, now time.Time) error
}

// Documents reads whole blobs with their metadata (blobstore.Store). Errors: apperr not-found
// for a missing blob, too-large beyond limit.
type Documents interface {
	ReadAll(ctx context.Context, container, name string, limit int64) ([]byte, map[string]string, error)
}

// Creator is the create-session use case (spec "Create session", DESIGN 5 and 6a): the
// dispatcher's route and the render and batch jobs create sessions through it. It validates the
// request, reads the PDF once (hash and, when needed, its fields), resolves the field manifest,
// protects the signers' addresses, and stores the session with its Start change.
type Creator struct {
	Store     SessionCreator
	Docs      Documents
	Templates Templates // reads the package a request's templatePath names
	Tokens    *tokens.Codec
	Hasher    *pii.Hasher
	Cipher    *pii.Cipher
	PortalURL string // links are {PortalURL}/sign?token=...
	Now       func() time.Time
	// Licensing is asked after the request's checks, before anything is read or stored
	// (DESIGN 19); nil: the offline licence alone.
	Licensing licensing.Validator

	fields manifestCache // the PDFs' own manifests by hash
}

// Created is a stored session, the change it started with (its effects are the app's to carry
// out: invitations) and each slot's portal link.
type Created struct {
	Session *Session
	Slots   []Slot
	Change  Change
	Links   []string
}

// Create makes a session for tenant on behalf of actor. Errors: 400 with the field at fault
// (validation, pdf_not_found, pdf_hash_mismatch, template_not_found, template_invalid,
// manifest_invalid, pdf_unreadable); 413 document_too_large; 409 session_exists naming the live
// groupId; the store's.
func (c *Creator) Create(ctx context.Context, tenant string, actor Actor, req CreateRequest) (Created, error) {
	allowed := []string{ContainerDocuments}
	if req.Sealed {
		allowed = append(allowed, ContainerSigned)
	}
	src, err := blobpath.Accept(&req, allowed...)
	if err == nil {
		src, err = blobpath.Tenant("pdfBlobPath", src, ContainerSigned, tenant)
	}
	if err == nil {
		src, err = blobpath.Tenant("pdfBlobPath", src, ContainerDocuments, tenant)
	}
	if err == nil && req.TemplatePath != "" && !req.Sealed {
		err = template.Confine("templatePath", req.TemplatePath, tenant)
	}
	if err == nil {
		err = licensing.Check(ctx, c.Licensing, tenant, licence.FeatureEsign, req.CorrelationID)
	}
	if err != nil {
		return Created{}, err
	}
	manifest, source, err := c.manifest(ctx, src, req.TemplatePath, req.PDFHash)
	if err != nil {
		return Created{}, err
	}
	now := c.Now().UTC()
	s := &Session{
		GroupID: uuid.NewString(), TenantID: tenant, CorrelationID: req.CorrelationID, DocumentID: req.DocumentID,
		DocType: req.DocType, DocumentTitle: req.DocumentName, PDFBlobPath: src.String(), PDFHash: req.PDFHash, TemplatePath: req.TemplatePath,
		SigningMode: req.SigningMode, State: SessionPending, CreatedAt: now,
		ExpiresAt:   now.Add(time.Duration(*req.ExpiresInMinutes) * time.Minute),
		RequestedBy: req.RequestedBy, OrganizationName: req.OrganizationName, SendPerSignerNotices: *req.SendPerSignerNotices,
		ConsentVersion: ConsentVersion, Manifest: manifest, ManifestSource: source, Reminders: req.Reminders,
	}
	if req.RequestedByEmail != "" {
		if s.RequestedByEmailEnc, err = c.Cipher.EncryptString(req.RequestedByEmail, pii.AAD(s.GroupID, "requestedBy")); err != nil {
			return Created{}, apperr.Wrap(err, apperr.KindInternal, pii.CodeEncrypt, "could not protect the requester's address")
		}
	}
	if len(req.ThenDeliver) > 0 {
		if s.ThenDeliverEnc, err = c.Cipher.EncryptString(string(req.ThenDeliver), pii.AAD(s.GroupID, "thenDeliver")); err != nil {
			return Created{}, apperr.Wrap(err, apperr.KindInternal, pii.CodeEncrypt, "could not protect the delivery's recipients")
		}
	}
	slots, err := c.newSlots(s.GroupID, req.Signers)
	if err != nil {
		return Created{}, err
	}
	ch := Start(s, slots, now)
	ch.By(actor)
	if err := c.Store.Create(ctx, s, slots, ch, now); err != nil {
		return Created{}, err
	}
	links, err := c.Links(s, slots)
	if err != nil {
		return Created{}, err
	}
	return Created{Session: s, Slots: slots, Change: ch, Links: links}, nil
}

// Links are the current portal links of a stored session's slots (a retried render answers its
// session's links again).
func (c *Creator) Links(s *Session, slots []Slot) ([]string, error) {
	out := make([]string, 0, len(slots))
	for i := range slots {
		link, err := PortalLink(c.Tokens, c.PortalURL, s, &slots[i])
		if err != nil {
			return nil, err
		}
		out = append(out, link)
	}
	return out, nil
}

// PortalLink is slot sl's single-use portal link {portalURL}/sign?token=..., expiring with the
// session.
func PortalLink(codec *tokens.Codec, portalURL string, s *Session, sl *Slot) (string, error) {
	tok, _, err := codec.IssueSlot(tokens.Slot{GroupID: s.GroupID, SlotIndex: sl.Index, ID: sl.LinkJTI, ExpiresAt: s.ExpiresAt})
	if err != nil {
		return "", apperr.Wrap(err, apperr.KindInternal, tokens.CodeIssueFailed, "could not issue the portal link")
	}
	return portalURL + "/sign?token=" + tok, nil
}

// newSlots builds the slots in slotIndex order with their ids, protected e-mail and phone,
// and each slot's first single-use link id.
func (c *Creator) newSlots(groupID string, signers []SignerRequest) ([]Slot, error) {
	sorted := append([]SignerRequest(nil), signers...)
	sort.Slice(sorted, func(i, j int) bool { return *sorted[i].SlotIndex < *sorted[j].SlotIndex })
	slots := make([]Slot, len(sorted))
	for i, sg := range sorted {
		idx := strconv.Itoa(i)
		enc, err := c.Cipher.EncryptString(sg.Email, pii.AAD(groupID, "slot", idx))
		if err != nil {
			return nil, apperr.Wrap(err, apperr.KindInternal, pii.CodeEncrypt, "could not protect a signer's address")
		}
		var phone string
		if sg.PhoneNumber != "" {
			if phone, err = c.Cipher.EncryptString(sg.PhoneNumber, pii.AAD(groupID, "phone", idx)); err != nil {
				return nil, apperr.Wrap(err, apperr.KindInternal, pii.CodeEncrypt, "could not protect a signer's phone number")
			}
		}
		slots[i] = Slot{
			Index: i, SessionID: uuid.NewString(), Role: sg.Role, EmailHash: c.Hasher.Email(sg.Email), EmailEnc: enc,
			PhoneEnc: phone, NamePrefill: sg.NamePrefill, Locale: sg.Locale, Condition: sg.CompletionCondition, OTPChannel: sg.OTPChannel,
			LinkJTI: uuid.NewString(),
		}
	}
	return slots, nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
