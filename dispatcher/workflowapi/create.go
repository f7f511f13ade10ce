package workflowapi

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
	"github.com/esign-svc/esign/shared/workflow"
)

// Limits of the create request.
const (
	MaxRecipients    = 10
	MaxCorrelationID = 200
	MaxMessage       = 2000
	MaxOrgName       = 200
)

// CreateRequest is the create-workflow body (spec "Create-workflow request body").
type CreateRequest struct {
	TemplatePath     string          `json:"templatePath"`
	TemplateID       string          `json:"templateId"` // legacy: the package folder templates/<templateId>/
	CorrelationID    string          `json:"correlationId"`
	InitialData      map[string]any  `json:"initialData"`
	TemplateSettings json.RawMessage `json:"templateSettings"`
	CallbackURL      string          `json:"callbackUrl"`
}

type createView struct {
	WorkflowID    string `json:"workflowId"`
	CorrelationID string `json:"correlationId"`
	State         string `json:"state"`
	PortalURL     string `json:"portalUrl"`
	Idempotent    bool   `json:"idempotent,omitempty"`
}

// create is POST /api/workflow (role Esign.Initiator): the package (templatePath, or the legacy
// templateId as the folder templates/<templateId>/) and its schema (templateSettings.workflow.
// schemaPath, else the package's schema.yaml) are read, the settings merged over the package's
// defaults, initialData checked (and, with autoValidateOnCreate, validated at once), the
// correlationId claimed for the tenant and the invitation queued. 201 with the participant's
// portalUrl; a correlationId the tenant used before answers 200 idempotent: true with the
// existing workflow (and a fresh link), nothing queued. Errors: 401; 403 role, the licence's
// (licence_feature_missing naming esign or delivery when templateSettings would auto-trigger a
// signing session or deliveries after the seal that the licence lacks); 400 naming the field.
func (a *API) create(w http.ResponseWriter, r *http.Request) error {
	p, err := a.gate(r, auth.RoleInitiator)
	if err != nil {
		return err
	}
	var req CreateRequest
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	now := a.now()
	x, ch, err := a.prepare(r.Context(), req, p, now)
	if err != nil {
		return err
	}
	ch.By(actor(r, "initiator", p.CallerID()))
	stored, created, err := a.Store.Create(r.Context(), x, ch, now)
	if err != nil {
		return err
	}
	link, err := a.portalURL(stored.ID)
	if err != nil {
		return err
	}
	v := createView{WorkflowID: stored.ID, CorrelationID: stored.CorrelationID, State: string(stored.State), PortalURL: link}
	if !created {
		v.Idempotent = true
		return web.JSON(w, http.StatusOK, v)
	}
	if err := emit(r.Context(), stored, ch); err != nil {
		return err
	}
	w.Header().Set("Location", "/api/workflow/"+stored.ID+"/status")
	return web.JSON(w, http.StatusCreated, v)
}

// prepare is create's checks and its transition, before anything is stored: the package, the
// merged settings, the request's own fields, the schema, the auto-trigger's plan and initialData.
// Errors: 400 naming the field; template_invalid, template_not_found, schema_invalid; the
// blob reads' errors.
func (a *API) prepare(ctx context.Context, req CreateRequest, p auth.Principal, now time.Time) (*workflow.Workflow, kernel.Change, error) {
	field, path, err := req.template(p.TenantID)
	if err != nil {
		return nil, kernel.Change{}, err
	}
	if err := template.Confine(field, path, p.TenantID); err != nil {
		return nil, kernel.Change{}, err
	}
	pkg, err := a.Templates.Load(ctx, field, path)
	if err != nil {
		return nil, kernel.Change{}, err
	}
	settings, err := pkg.Merge("templateSettings", req.TemplateSettings)
	if err != nil {
		return nil, kernel.Change{}, err
	}
	setup, err := a.setup(req, settings)
	if err != nil {
		return nil, kernel.Change{}, err
	}
	if setup.SchemaPath != "" {
		if err := template.Confine("templateSettings.workflow.schemaPath", setup.SchemaPath, p.TenantID); err != nil {
			return nil, kernel.Change{}, err
		}
	}
	schema, err := a.schema(ctx, pkg, setup.SchemaPath)
	if err != nil {
		return nil, kernel.Change{}, err
	}
	x := &workflow.Workflow{ID: a.NewID(), Tenant: p.TenantID, CorrelationID: req.CorrelationID, TemplatePath: pkg.Path,
		CreatedBy: p.CallerID()}
	if p.Email != "" {
		x.CreatorHash = a.Hasher.Email(p.Email) // DESIGN 14: the creator may not decide it
	}
	x.Setup = setup
	x.Setup.SchemaLocked = pkg.IsLocked("workflow.schemaPath") // DESIGN 14: the manual seal's rule
	x.Setup.Title = cmp.Or(schema.Title, pkg.Name)
	// the auto-trigger after the seal is checked now, by the rules and the licence it will meet
	// then
	plan, err := workflow.LicencePlan(x)
	if err != nil {
		return nil, kernel.Change{}, err
	}
	if err := a.Licence.Allow(plan); err != nil {
		return nil, kernel.Change{}, err
	}
	if err := licensing.Check(ctx, a.Licensing, p.TenantID, licence.FeatureWorkflow, req.CorrelationID); err != nil {
		return nil, kernel.Change{}, err
	}
	ch, err := workflow.Create(x, schema, req.InitialData, now)
	if err != nil {
		return nil, kernel.Change{}, err
	}
	return x, ch, nil
}

// portalURL is the participant's link with a fresh token.
func (a *API) portalURL(id string) (string, error) {
	tok, _, err := a.Tokens.IssueWorkflowPortal(tokens.WorkflowPortal{WorkflowID: id, Participant: workflow.ParticipantID, Role: tokens.RoleParticipant})
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(a.PortalURL, "/") + "/workflow/" + url.PathEscape(id) + "?pt=" + url.QueryEscape(tok), nil
}

// template is the request's package path: templatePath, or the legacy templateId as the folder
// templates/<tenant>/<templateId>/ of the caller's own packages.
func (req *CreateRequest) template(tenant string) (field, path string, err error) {
	switch {
	case req.TemplatePath != "" && req.TemplateID != "":
		return "", "", apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("templateId", "give templatePath or templateId, not both"))
	case req.TemplatePath != "":
		return "templatePath", req.TemplatePath, nil
	case req.TemplateID != "":
		if strings.ContainsAny(req.TemplateID, "/\\") || strings.HasPrefix(req.TemplateID, ".") {
			return "", "", apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("templateId", "must be a package folder name"))
		}
		return "templateId", template.Container + "/" + blobpath.TenantName(tenant, req.TemplateID, "/"), nil
	}
	return "", "", apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("templatePath", "is required (or the legacy templateId)"))
}

// setup checks the request's own fields and the merged templateSettings.workflow, and keeps
// .esign and .delivery for after the seal.
func (a *API) setup(req CreateRequest, s template.Settings) (workflow.Setup, error) {
	var errs []apperr.FieldError
	bad := func(f, msg string) { errs = append(errs, apperr.Field(f, msg)) }
	if id := strings.TrimSpace(req.CorrelationID); id == "" || id != req.CorrelationID || utf8.RuneCountInString(id) > MaxCorrelationID {
		bad("correlationId", "is required: at most 200 characters without surrounding spaces")
	}
	var out workflow.Setup
	if req.CallbackURL != "" {
		if _, err := a.Callbacks.CheckURL(req.CallbackURL); err != nil {
			bad("callbackUrl", "must be an https URL of a public host")
		}
		out.CallbackURL = req.CallbackURL
	}
	if wf := s.Workflow; wf != nil {
		out.SchemaPath, out.RequireOTP, out.OrganizationName, out.Message = wf.SchemaPath, wf.RequireOTP, wf.OrganizationName, wf.Message
		if len(wf.Recipients) > MaxRecipients {
			bad("templateSettings.workflow.recipients", "must hold at most 10 recipients")
		}
		for i, rc := range wf.Recipients {
			if !validEmail(rc.Email) {
				bad("templateSettings.workflow.recipients["+itoa(i)+"].email", "must be an e-mail address")
			}
			out.Recipients = append(out.Recipients, workflow.Recipient{Email: rc.Email, DisplayName: rc.DisplayName})
		}
		if utf8.RuneCountInString(wf.OrganizationName) > MaxOrgName {
			bad("templateSettings.workflow.organizationName", "must be at most 200 characters")
		}
		if utf8.RuneCountInString(wf.Message) > MaxMessage {
			bad("templateSettings.workflow.message", "must be at most 2000 characters")
		}
		if wf.RequireOTP && len(wf.Recipients) == 0 {
			bad("templateSettings.workflow.requireOtp", "needs a recipient to send the code to")
		}
		errs = append(errs, out.TextProblems()...)
	}
	if len(errs) > 0 {
		return workflow.Setup{}, apperr.Invalid(apperr.CodeInvalidRequest, errs...)
	}
	var err error
	if s.ESign != nil && s.ESign.Enabled {
		out.ESign, err = json.Marshal(s.ESign)
	}
	if err == nil && s.Delivery != nil && s.Delivery.Enabled {
		out.Delivery, err = json.Marshal(s.Delivery)
	}
	return out, err
}

// schema reads the workflow schema: schemaPath (a blob of the templates container) when set,
// else the package's schema.yaml. Errors: 400 schema_invalid, template_not_found.
func (a *API) schema(ctx context.Context, pkg *template.Package, schemaPath string) (*workflow.Schema, error) {
	return workflow.SchemaOf(ctx, a.Blobs, pkg, schemaPath)
}

func validEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	m, err := mail.ParseAddress(s)
	return err == nil && m.Address == s && m.Name == "" && strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".")
}
