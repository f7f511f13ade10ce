package render

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/pdf/stamp"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/text"
)

// Auto-trigger defaults (spec "Auto-trigger settings", "Limits").
const (
	autoSigningMode       = esign.ModeSequential
	autoExpiresInMinutes  = esign.MaxExpiresInMinutes // 10080, 7 days
	placeholderHash       = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
	deliveryKeyPrefix     = "render:"
	fieldESignSettings    = "templateSettings.esign"
	fieldDeliverySettings = "templateSettings.delivery"
)

// esignRequest is the create-session request of templateSettings.esign on the rendered
// document, with the auto-trigger defaults (sequential, 10080 minutes; per-signer notices as
// esign.Normalize decides from the mode), checked now under templateSettings.esign. nil when
// esign is not enabled. The render's generatedBy never stands in for requestedByEmail.
func esignRequest(s *template.ESignSettings, d *document.Document) (*esign.CreateRequest, error) {
	if s == nil || !s.Enabled {
		return nil, nil
	}
	req := &esign.CreateRequest{
		CorrelationID: d.CorrelationID, DocumentID: d.DocumentID, DocType: d.DocType,
		PDFBlobPath: d.PDFBlobPath, PDFHash: placeholderHash, SigningMode: esign.SigningMode(s.SigningMode),
		ExpiresInMinutes: s.ExpiresInMinutes, OrganizationName: s.OrganizationName, RequestedBy: s.RequestedBy,
		RequestedByEmail: s.RequestedByEmail, SendPerSignerNotices: s.SendPerSignerNotices,
	}
	if req.SigningMode == "" {
		req.SigningMode = autoSigningMode
	}
	if req.ExpiresInMinutes == nil {
		m := autoExpiresInMinutes
		req.ExpiresInMinutes = &m
	}
	for _, sg := range s.Signers {
		req.Signers = append(req.Signers, esign.SignerRequest{
			SlotIndex: sg.SlotIndex, Role: sg.Role, Email: sg.Email, NamePrefill: sg.NamePrefill,
			CompletionCondition: esign.Condition(sg.CompletionCondition), OTPChannel: esign.OTPChannel(sg.OTPChannel),
			PhoneNumber: sg.PhoneNumber,
		})
	}
	if err := req.Validate(); err != nil {
		return nil, under(fieldESignSettings, err)
	}
	return req, nil
}

// deliveryRequest is the create-delivery request of templateSettings.delivery on the rendered
// document (replaced by the signed PDF when it waits for signing), checked now under
// templateSettings.delivery. nil when delivery is not enabled.
func deliveryRequest(s *template.DeliverySettings, o Options, pkg *template.Package, record map[string]any, d *document.Document) (*delivery.CreateRequest, error) {
	if s == nil || !s.Enabled {
		return nil, nil
	}
	req := &delivery.CreateRequest{
		CorrelationID: d.CorrelationID, DocumentID: d.DocumentID, DocumentName: documentName(o, pkg, record, d),
		PDFBlobPath: d.PDFBlobPath, Mode: delivery.Mode(s.Mode), RequesterOrg: s.RequesterOrg, Message: s.Message,
		ExpiresInHours: s.ExpiresInHours,
	}
	if req.Mode == "" {
		req.Mode = delivery.ModeSecureEmail
	}
	otp := s.RequireOTP
	req.RequireOTP = &otp
	for _, rc := range s.Recipients {
		req.Recipients = append(req.Recipients, delivery.Recipient{Email: rc.Email, Name: rc.Name, Role: rc.Role})
	}
	if t := s.SharePointTarget; t != nil {
		req.SharePointTarget = &delivery.Target{SiteURL: t.SiteURL, LibraryPath: t.LibraryPath, FolderPath: t.FolderPath}
	}
	if err := req.Validate(); err != nil {
		return nil, under(fieldDeliverySettings, err)
	}
	req.Normalize()
	return req, nil
}

// documentName is the file name a recipient sees: options.fileNameTemplate expanded, else the
// title, with ".pdf", made a valid delivery documentName: path separators become "-", line
// breaks and refused characters a space, and it is cut to MaxDocumentName characters (not
// bytes: a cut inside a character is not UTF-8).
func documentName(o Options, pkg *template.Package, record map[string]any, d *document.Document) string {
	name := d.Title
	if o.FileNameTemplate != "" {
		name = template.Expand(o.FileNameTemplate, func(k string) string { return pkg.Text(record, k) })
	}
	name = strings.TrimSpace(strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\':
			return '-'
		case r == '\n' || r == '\r' || text.Refused(r):
			return ' '
		}
		return r
	}, strings.ToValidUTF8(name, "")))
	if name == "" {
		name = d.CorrelationID
	}
	if r := []rune(name); len(r) > delivery.MaxDocumentName-4 {
		name = strings.TrimSpace(string(r[:delivery.MaxDocumentName-4]))
	}
	if !strings.HasSuffix(strings.ToLower(name), ".pdf") {
		name += ".pdf"
	}
	return name
}

// under moves a validation error's fields under prefix (signers[0].email becomes
// templateSettings.esign.signers[0].email).
func under(prefix string, err error) error {
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindInvalid {
		return err
	}
	fields := make([]apperr.FieldError, len(e.Fields))
	for i, f := range e.Fields {
		f.Field = prefix + "." + f.Field
		fields[i] = f
	}
	return apperr.Invalid(e.Code, fields...)
}

// values are what the template's fields show for record: text, a check for booleans, wrapped
// lines for text fields.
func values(pkg *template.Package, record map[string]any) map[string]stamp.Value {
	out := make(map[string]stamp.Value, len(pkg.Fields))
	for _, f := range pkg.Fields {
		v, ok := record[f.Key]
		if !ok || v == nil {
			continue
		}
		if f.Type == template.TypeBoolean {
			b, _ := v.(bool)
			out[f.Key] = stamp.Value{Check: &b, Text: strconv.FormatBool(b)}
			continue
		}
		out[f.Key] = stamp.Value{Text: pkg.Text(record, f.Key), Multiline: f.Type == template.TypeText}
	}
	return out
}

// trigger carries out the auto-trigger of p on the stored document, resuming what an earlier run
// of the same render started: the signing session (and with it the delivery that waits for it),
// or the delivery sessions.
func (r *Renderer) trigger(ctx context.Context, by Caller, p *plan, out *Result) error {
	d := out.Document
	switch {
	case p.esign != nil:
		c, isNew, err := r.session(ctx, by, p, d)
		if err != nil {
			return err
		}
		out.ESign, out.ESignNew, out.DeliveryAfterSigning = c, isNew, p.delivery != nil
		if d.ESignGroupID != c.Session.GroupID {
			gid := c.Session.GroupID
			d, err = r.Store.Update(ctx, d.CorrelationID, func(d *document.Document) kernel.Change {
				ch := document.StartESign(d, gid, r.Now().UTC())
				ch.By(by.Actor)
				return ch
			})
			if err != nil {
				return err
			}
			out.Document = d
		}
	case p.delivery != nil:
		req := *p.delivery
		c, err := r.Delivery.Create(ctx, delivery.Requester{TenantID: by.TenantID, CallerID: by.CallerID, Actor: by.Actor},
			deliveryKeyPrefix+d.CorrelationID, req)
		if err != nil {
			return under(fieldDeliverySettings, err)
		}
		out.Delivery, out.DeliveryMode = &c, req.Mode
		for _, rc := range req.Recipients {
			out.DeliveryRecipients = append(out.DeliveryRecipients, rc.Email)
		}
		if !slices.Equal(d.DeliveryIDs, c.DeliveryIDs) {
			d, err = r.Store.Update(ctx, d.CorrelationID, func(d *document.Document) kernel.Change {
				ch := document.StartDelivery(d, c.DeliveryIDs, r.Now().UTC())
				ch.By(by.Actor)
				return ch
			})
			if err != nil {
				return err
			}
			out.Document = d
		}
	}
	return nil
}

// session creates the signing session on the rendered document, or finds the one an earlier
// run of this render created (isNew false: its invitations were queued then).
func (r *Renderer) session(ctx context.Context, by Caller, p *plan, d *document.Document) (*esign.Created, bool, error) {
	gid := d.ESignGroupID
	if gid == "" {
		req := *p.esign
		req.PDFHash = d.PDFHash
		c, err := r.ESign.Create(ctx, by.TenantID, by.Actor, req)
		if err == nil {
			return &c, true, nil
		}
		if e, ok := apperr.As(err); !ok || e.Code != "session_exists" {
			return nil, false, under(fieldESignSettings, err)
		}
		if gid, err = r.Sessions.GroupByCorrelation(ctx, by.TenantID, d.CorrelationID); err != nil {
			return nil, false, err
		}
	}
	s, slots, err := r.loadSession(ctx, gid)
	if err != nil {
		return nil, false, err
	}
	if s.TenantID != d.TenantID || s.PDFBlobPath != d.PDFBlobPath || s.PDFHash != d.PDFHash {
		// a session made by POST /api/esign/session under the correlationId, on another document
		return nil, false, apperr.New(apperr.KindConflict, "session_exists",
			"a signing session under correlationId %s signs another document (groupId %s)", d.CorrelationID, s.GroupID)
	}
	links, err := r.ESign.Links(s, slots)
	if err != nil {
		return nil, false, err
	}
	return &esign.Created{Session: s, Slots: slots, Links: links}, false, nil
}

// Waiting for a session whose create another request is still carrying out (its claim is
// taken before its row is written).
const (
	sessionWaits   = 20
	sessionBackoff = 50 * time.Millisecond
)

// loadSession loads the session gid, waiting a little while it is not written yet: a
// concurrent render of the same request holds its correlationId's claim and is writing it.
// Errors: 409 request_in_progress when it does not appear; the store's.
func (r *Renderer) loadSession(ctx context.Context, gid string) (*esign.Session, []esign.Slot, error) {
	for i := 0; ; i++ {
		s, slots, err := r.Sessions.Load(ctx, gid)
		if apperr.KindOf(err) != apperr.KindNotFound {
			return s, slots, err
		}
		if i == sessionWaits {
			return nil, nil, apperr.New(apperr.KindConflict, "request_in_progress",
				"another request is creating the signing session of this render; retry")
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(sessionBackoff):
		}
	}
}

// FieldValues are the stamp values of record's fields of pkg, as a render fills template.pdf:
// the workflow seal fills the same template from a workflow's data through it.
func FieldValues(pkg *template.Package, record map[string]any) map[string]stamp.Value {
	return values(pkg, record)
}
