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
	"github.com/esign-svc/esign/shared/esign"
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
	TemplateID       string          `json:"templateId"`    // alias of templatePath; a bare name is the legacy folder templates/<tenant>/<templateId>/
	CorrelationID    string          `json:"correlationId"` // optional: a generated UUID when absent
	InitialData      map[string]any  `json:"initialData"`
	TemplateSettings json.RawMessage `json:"templateSettings"`
	CallbackURL      string          `json:"callbackUrl"`
	Options          *CreateOptions  `json:"options"`
}

// CreateOptions is the create body's options: the documentId and docType of the sealed record
// and of the signing session or deliveries the seal auto-triggers (default: the workflow id and
// docType "workflow").
type CreateOptions struct {
	DocumentID string `json:"documentId"`
	DocType    string `json:"docType"`
}

type createView struct {
	WorkflowID    string `json:"workflowId"`
	CorrelationID string `json:"correlationId"`
	State         string `json:"state"`
	PortalURL     string `json:"portalUrl"`
	Idempotent    bool   `json:"idempotent,omitempty"`
}

// create is POST /api/workflow (role Esign.Initiator): the package (templatePath, or its alias
// templateId) and its schema (templateSettings.workflow.schemaPath, else the package's own
// workflow.schemaPath, else its schema.yaml) are read, the settings merged over the package's
// defaults, initialData checked (and, with autoValidateOnCreate, validated at once), the
// correlationId (a generated UUID when absent) claimed for the tenant and the invitation
// queued. 201 with the participant's portalUrl; a correlationId the tenant used before answers
// 200 idempotent: true with the existing workflow (and a fresh link), nothing queued. Errors:
// 401; 403 role, the licence's (licence_feature_missing naming esign or delivery when
// templateSettings would auto-trigger a signing session or deliveries after the seal that the
// licence lacks); 400 naming the field.
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
	stored, created, err := a.Workflows.Create(r.Context(), x, ch, actor(r, "initiator", p.CallerID()), now)
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
	if setup.SchemaPath, err = req.schemaPath(field, pkg, setup.SchemaPath); err != nil {
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
	x := &workflow.Workflow{ID: a.NewID(), Tenant: p.TenantID, CorrelationID: cmp.Or(req.CorrelationID, a.NewID()),
		TemplatePath: pkg.Path, CreatedBy: p.CallerID()}
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
	if err := licensing.Check(ctx, a.Licensing, p.TenantID, licence.FeatureWorkflow, x.CorrelationID); err != nil {
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

// template is the request's package path and the field that named it: templatePath, or its
// alias templateId, which takes any templatePath value (a folder or a ZIP package under
// templates/<tenant>/ or templates/shared/, confined by the caller as templatePath is); a bare
// templateId, without a /, is the legacy folder templates/<tenant>/<templateId>/ of the caller's
// own packages. Both given must name one package. Errors: 400 invalid_request naming templateId
// (a bare name starting with . or holding a \, or another package than templatePath's) or
// templatePath (neither given).
func (req *CreateRequest) template(tenant string) (field, path string, err error) {
	id := req.TemplateID
	if id != "" && !strings.Contains(id, "/") {
		if strings.Contains(id, "\\") || strings.HasPrefix(id, ".") {
			return "", "", apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("templateId", "must be a package folder name or a template path"))
		}
		id = template.Container + "/" + blobpath.TenantName(tenant, id, "/")
	}
	switch {
	case req.TemplatePath != "" && id != "":
		if strings.TrimSuffix(id, "/") != strings.TrimSuffix(req.TemplatePath, "/") {
			return "", "", apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("templateId", "names another package than templatePath: give one of them"))
		}
		return "templatePath", req.TemplatePath, nil
	case req.TemplatePath != "":
		return "templatePath", req.TemplatePath, nil
	case id != "":
		return "templateId", id, nil
	}
	return "", "", apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("templatePath", "is required (or its alias templateId)"))
}

// schemaPath is the workflow's schemaPath: the request's templateSettings.workflow.schemaPath
// as it is (a blob path), or the package's own workflow.schemaPath relative to the package
// (workflow.PackageSchemaPath). merged is the merged settings' value; field names the package.
func (req *CreateRequest) schemaPath(field string, pkg *template.Package, merged string) (string, error) {
	var own struct {
		Workflow *struct {
			SchemaPath *string `json:"schemaPath"`
		} `json:"workflow"`
	}
	// the settings were read by Merge already: a body it took decodes here
	if len(req.TemplateSettings) > 0 && json.Unmarshal(req.TemplateSettings, &own) == nil &&
		own.Workflow != nil && own.Workflow.SchemaPath != nil {
		return merged, nil
	}
	return workflow.PackageSchemaPath(field, pkg, merged)
}

// setup checks the request's own fields and the merged templateSettings.workflow, and keeps
// .esign and .delivery for after the seal.
func (a *API) setup(req CreateRequest, s template.Settings) (workflow.Setup, error) {
	var errs []apperr.FieldError
	bad := func(f, msg string) { errs = append(errs, apperr.Field(f, msg)) }
	if id := strings.TrimSpace(req.CorrelationID); req.CorrelationID != "" && (id == "" || id != req.CorrelationID || utf8.RuneCountInString(id) > MaxCorrelationID) {
		bad("correlationId", "must be at most 200 characters without surrounding spaces (or left out for a generated one)")
	}
	var out workflow.Setup
	if o := req.Options; o != nil {
		errs = append(errs, esign.CheckDocument("options.", o.DocumentID, o.DocType, false)...)
		out.DocumentID, out.DocType = o.DocumentID, o.DocType
	}
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
			out.Recipients = append(out.Recipients, workflow.Recipient{Email: rc.Email, DisplayName: rc.DisplayName, Locale: rc.Locale})
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
