package render

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/licence"
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

// Target is the document an auto-trigger acts on: a rendered document, or a sealed workflow
// record (DESIGN 9 and 10).
type Target struct {
	TenantID      string
	CorrelationID string // the signing session's and the deliveries' correlationId
	DocumentID    string
	DocType       string
	DocumentName  string // the file name delivery recipients see
	Title         string // the document's title: the signing session's documentName ("" for none)
	PDFBlobPath   string
	PDFHash       string // "sha256:<hex>"; may be empty while planning, before the document exists
	// Sealed: PDFBlobPath lies in the tenant's folder of signed/ (esign.CreateRequest.Sealed).
	Sealed bool
}

// Trigger is a checked auto-trigger: the create-session request of templateSettings.esign, the
// create-delivery request of templateSettings.delivery, or both, the delivery then waiting for
// the session to complete (ESign.ThenDeliver) and made on the signed PDF.
type Trigger struct {
	ESign    *esign.CreateRequest    // nil when esign is not enabled
	Delivery *delivery.CreateRequest // nil when delivery is not enabled
}

// Plan is what the trigger makes, for the licence: a signing session, deliveries, both or
// nothing (a render that only renders).
func (tr Trigger) Plan() licence.Plan {
	return licence.Plan{ESign: tr.ESign != nil, Delivery: tr.Delivery != nil}
}

// None reports a trigger that starts nothing.
func (tr Trigger) None() bool { return tr.ESign == nil && tr.Delivery == nil }

// PlanTrigger checks the auto-trigger settings against t by the create-session and
// create-delivery rules, with the defaults (sequential, 10080 minutes, per-signer notices as
// esign decides from the mode; secure e-mail), and pairs them. Errors: 400 naming the field
// under templateSettings.esign. or templateSettings.delivery.; internal when the delivery cannot
// be kept for after signing.
func PlanTrigger(es *template.ESignSettings, ds *template.DeliverySettings, t Target) (Trigger, error) {
	var tr Trigger
	var err error
	if tr.ESign, err = esignRequest(es, t); err != nil {
		return Trigger{}, err
	}
	if tr.Delivery, err = deliveryRequest(ds, t); err != nil {
		return Trigger{}, err
	}
	if tr.ESign != nil && tr.Delivery != nil {
		if tr.ESign.ThenDeliver, err = json.Marshal(tr.Delivery); err != nil {
			return Trigger{}, apperr.Wrap(err, apperr.KindInternal, "render_plan", "could not keep the delivery for after signing")
		}
	}
	return tr, nil
}

// esignRequest is the create-session request of templateSettings.esign on t, with the
// auto-trigger defaults, checked now under templateSettings.esign. nil when esign is not
// enabled. A render's generatedBy never stands in for requestedByEmail.
func esignRequest(s *template.ESignSettings, t Target) (*esign.CreateRequest, error) {
	if s == nil || !s.Enabled {
		return nil, nil
	}
	req := &esign.CreateRequest{
		CorrelationID: t.CorrelationID, DocumentID: t.DocumentID, DocType: t.DocType, DocumentName: t.Title,
		PDFBlobPath: t.PDFBlobPath, PDFHash: cmp.Or(t.PDFHash, placeholderHash), SigningMode: esign.SigningMode(s.SigningMode),
		ExpiresInMinutes: s.ExpiresInMinutes, OrganizationName: s.OrganizationName, RequestedBy: s.RequestedBy,
		RequestedByEmail: s.RequestedByEmail, SendPerSignerNotices: s.SendPerSignerNotices, Sealed: t.Sealed,
	}
	if r := s.Reminders; r != nil {
		req.Reminders = &esign.ReminderPolicy{FirstAfterHours: r.FirstAfterHours, EveryHours: r.EveryHours, Max: r.Max}
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
			PhoneNumber: sg.PhoneNumber, Locale: sg.Locale,
		})
	}
	if err := req.Validate(); err != nil {
		return nil, under(fieldESignSettings, err)
	}
	return req, nil
}

// deliveryRequest is the create-delivery request of templateSettings.delivery on t (replaced by
// the signed PDF when it waits for signing), checked now under templateSettings.delivery. nil
// when delivery is not enabled.
func deliveryRequest(s *template.DeliverySettings, t Target) (*delivery.CreateRequest, error) {
	if s == nil || !s.Enabled {
		return nil, nil
	}
	req := &delivery.CreateRequest{
		CorrelationID: t.CorrelationID, DocumentID: t.DocumentID, DocumentName: t.DocumentName,
		PDFBlobPath: t.PDFBlobPath, Mode: delivery.Mode(s.Mode), RequesterOrg: s.RequesterOrg, Message: s.Message,
		ExpiresInHours: s.ExpiresInHours,
	}
	if req.Mode == "" {
		req.Mode = delivery.ModeSecureEmail
	}
	otp := s.RequireOTP
	req.RequireOTP = &otp
	for _, rc := range s.Recipients {
		req.Recipients = append(req.Recipients, delivery.Recipient{Email: rc.Email, Name: rc.Name, Role: rc.Role, Locale: rc.Locale})
	}
	if t := s.SharePointTarget; t != nil {
		req.SharePointTarget = &delivery.Target{SiteURL: t.SiteURL, LibraryPath: t.LibraryPath, FolderPath: t.FolderPath}
	}
	if r := s.Reminders; r != nil {
		req.Reminders = &delivery.ReminderPolicy{FirstAfterHours: r.FirstAfterHours, EveryHours: r.EveryHours, Max: r.Max}
	}
	if err := req.Validate(); err != nil {
		return nil, under(fieldDeliverySettings, err)
	}
	req.Normalize()
	return req, nil
}

// documentName is the file name a recipient of a render sees: options.fileNameTemplate
// expanded, else the title (DocumentName).
func documentName(o Options, pkg *template.Package, record map[string]any, d *document.Document) string {
	name := d.Title
	if o.FileNameTemplate != "" {
		name = template.Expand(o.FileNameTemplate, func(k string) string { return pkg.Text(record, k) })
	}
	return DocumentName(name, d.CorrelationID)
}

// DocumentName makes name a valid delivery documentName ending in ".pdf": path separators
// become "-", line breaks and refused characters a space, fallback stands in for an empty
// name, and it is cut to MaxDocumentName characters (not bytes: a cut inside a character is not
// UTF-8).
func DocumentName(name, fallback string) string {
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
		name = fallback
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

// Started is what an auto-trigger started.
type Started struct {
	// ESign is the signing session; ESignNew when this call created it (its invitations are the
	// caller's to queue: ESign.Change's effects).
	ESign    *esign.Created
	ESignNew bool
	// Delivery is the delivery sessions made now (not for a delivery that waits for signing);
	// DeliveryMode says which queue messages they need.
	Delivery     *delivery.Created
	DeliveryMode delivery.Mode
	// DeliveryRecipients are the recipients' addresses in the order of Delivery's ids (the
	// create answer names each session's recipient).
	DeliveryRecipients []string
	// DeliveryAfterSigning: the delivery waits for the session to complete.
	DeliveryAfterSigning bool
}

// Starter carries out auto-triggers: the render use case, and the processor's workflow
// auto-trigger after the seal. Safe for concurrent use.
type Starter struct {
	Sessions Sessions
	ESign    SessionCreator
	Delivery DeliveryCreator
}

// Start carries out tr on t for by, resuming what an earlier run started: groupID names the
// session an earlier run recorded ("" when none is known: one made under t's correlationId on
// the same document is found), deliveryKey is the deliveries' idempotency key. Errors: the
// creators' (400 under templateSettings.*, 409 session_exists for a session under the
// correlationId on another document); the stores'.
func (st Starter) Start(ctx context.Context, by Caller, tr Trigger, t Target, groupID, deliveryKey string) (Started, error) {
	var out Started
	switch {
	case tr.ESign != nil:
		c, isNew, err := st.session(ctx, by, tr.ESign, t, groupID)
		if err != nil {
			return Started{}, err
		}
		out.ESign, out.ESignNew, out.DeliveryAfterSigning = c, isNew, tr.Delivery != nil
	case tr.Delivery != nil:
		req := *tr.Delivery
		c, err := st.Delivery.Create(ctx, delivery.Requester{TenantID: by.TenantID, CallerID: by.CallerID, Actor: by.Actor}, deliveryKey, req)
		if err != nil {
			return Started{}, under(fieldDeliverySettings, err)
		}
		out.Delivery, out.DeliveryMode = &c, req.Mode
		for _, rc := range req.Recipients {
			out.DeliveryRecipients = append(out.DeliveryRecipients, rc.Email)
		}
	}
	return out, nil
}

// trigger carries out the auto-trigger of p on the stored document and records on it what
// started, resuming what an earlier run of the same render started.
func (r *Renderer) trigger(ctx context.Context, by Caller, p *plan, out *Result) error {
	d := out.Document
	t := p.target
	t.PDFHash = d.PDFHash // the stored document's (an earlier run's, adopted)
	st, err := Starter{Sessions: r.Sessions, ESign: r.ESign, Delivery: r.Delivery}.Start(ctx, by, p.trigger, t,
		d.ESignGroupID, deliveryKeyPrefix+d.CorrelationID)
	if err != nil {
		return err
	}
	out.Started = st
	switch {
	case st.ESign != nil && d.ESignGroupID != st.ESign.Session.GroupID:
		out.Document, err = r.documents().StartedESign(ctx, d.TenantID, d.CorrelationID, st.ESign.Session.GroupID, by.Actor)
	case st.Delivery != nil && !slices.Equal(d.DeliveryIDs, st.Delivery.DeliveryIDs):
		out.Document, err = r.documents().StartedDelivery(ctx, d.TenantID, d.CorrelationID, st.Delivery.DeliveryIDs, by.Actor)
	}
	return err
}

// documents is the document use cases on the renderer's store and clock.
func (r *Renderer) documents() *document.Documents {
	return &document.Documents{Store: r.Store, Now: r.Now}
}

// session creates the signing session on t, or finds the one an earlier run created (isNew
// false: its invitations were queued then).
func (st Starter) session(ctx context.Context, by Caller, req *esign.CreateRequest, t Target, gid string) (*esign.Created, bool, error) {
	if gid == "" {
		req := *req
		req.PDFHash = t.PDFHash
		c, err := st.ESign.Create(ctx, by.TenantID, by.Actor, req)
		if err == nil {
			return &c, true, nil
		}
		if e, ok := apperr.As(err); !ok || e.Code != "session_exists" {
			return nil, false, under(fieldESignSettings, err)
		}
		if gid, err = st.Sessions.GroupByCorrelation(ctx, by.TenantID, t.CorrelationID); err != nil {
			return nil, false, err
		}
	}
	s, slots, err := st.loadSession(ctx, gid)
	if err != nil {
		return nil, false, err
	}
	if s.TenantID != t.TenantID || s.PDFBlobPath != t.PDFBlobPath || s.PDFHash != t.PDFHash {
		// a session made by POST /api/esign/session under the correlationId, on another document
		return nil, false, apperr.New(apperr.KindConflict, "session_exists",
			"a signing session under correlationId %s signs another document (groupId %s)", t.CorrelationID, s.GroupID)
	}
	links, err := st.ESign.Links(s, slots)
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
func (st Starter) loadSession(ctx context.Context, gid string) (*esign.Session, []esign.Slot, error) {
	for i := 0; ; i++ {
		s, slots, err := st.Sessions.Load(ctx, gid)
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
