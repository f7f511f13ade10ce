package template

import (
	"encoding/json"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
)

// Settings are a request's templateSettings (and a package's defaults of them): the blocks
// that auto-trigger a signing session or delivery after a render, and govern batch dispatch and
// workflows. Names as in the spec's tables; the users of each block apply the spec's defaults.
type Settings struct {
	Distribution *Distribution     `json:"distribution,omitempty"`
	ESign        *ESignSettings    `json:"esign,omitempty"`
	Delivery     *DeliverySettings `json:"delivery,omitempty"`
	Workflow     *WorkflowSettings `json:"workflow,omitempty"`
}

// Distribution is templateSettings.distribution (spec 001, "Distribution settings").
type Distribution struct {
	Enabled          bool            `json:"enabled"`
	Mode             string          `json:"mode,omitempty"` // individual | combined
	RequireApproval  bool            `json:"requireApproval"`
	FileNameTemplate string          `json:"fileNameTemplate,omitempty"`
	ApproversEmail   StringList      `json:"approversEmail,omitempty"` // one address or a list
	DeliveryConfig   *DeliveryConfig `json:"deliveryConfig,omitempty"`
	ZipBundle        bool            `json:"zipBundle"`
}

// DeliveryConfig is distribution.deliveryConfig.
type DeliveryConfig struct {
	Mode           string `json:"mode,omitempty"` // secure-email | none
	ExpiresInHours *int   `json:"expiresInHours,omitempty"`
}

// ESignSettings is templateSettings.esign (spec 000, "Auto-trigger settings").
type ESignSettings struct {
	Enabled              bool           `json:"enabled"`
	Signers              []SignerConfig `json:"signers,omitempty"`
	SigningMode          string         `json:"signingMode,omitempty"` // single | sequential | parallel
	ExpiresInMinutes     *int           `json:"expiresInMinutes,omitempty"`
	OrganizationName     string         `json:"organizationName,omitempty"`
	RequestedBy          string         `json:"requestedBy,omitempty"`
	RequestedByEmail     string         `json:"requestedByEmail,omitempty"`
	SendPerSignerNotices *bool          `json:"sendPerSignerNotices,omitempty"`
	Reminders            *Reminders     `json:"reminders,omitempty"`
}

// Reminders is templateSettings.esign.reminders and templateSettings.delivery.reminders
// (DESIGN 17; the create-session and create-delivery requests' reminders block, checked by
// their rules).
type Reminders struct {
	FirstAfterHours int `json:"firstAfterHours"`
	EveryHours      int `json:"everyHours"`
	Max             int `json:"max"`
}

// SignerConfig is one auto-trigger signer; the optional keys are those of the create-session
// request's signers.
type SignerConfig struct {
	SlotIndex           *int   `json:"slotIndex,omitempty"`
	Role                string `json:"role"`
	Email               string `json:"email"`
	NamePrefill         string `json:"namePrefill,omitempty"`
	CompletionCondition string `json:"completionCondition,omitempty"`
	OTPChannel          string `json:"otpChannel,omitempty"`
	PhoneNumber         string `json:"phoneNumber,omitempty"`
	Locale              string `json:"locale,omitempty"` // the signer's language (BCP 47)
}

// DeliverySettings is templateSettings.delivery (DESIGN 9; the create-delivery request's keys).
type DeliverySettings struct {
	Enabled          bool              `json:"enabled"`
	Recipients       []DeliveryContact `json:"recipients,omitempty"`
	Mode             string            `json:"mode,omitempty"`
	ExpiresInHours   *int              `json:"expiresInHours,omitempty"`
	RequireOTP       bool              `json:"requireOtp"`
	Message          string            `json:"message,omitempty"`
	RequesterOrg     string            `json:"requesterOrg,omitempty"`
	SharePointTarget *SharePointTarget `json:"sharePointTarget,omitempty"`
	Reminders        *Reminders        `json:"reminders,omitempty"` // for a recipient who has not opened it
}

// DeliveryContact is one delivery recipient.
type DeliveryContact struct {
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
	Role  string `json:"role,omitempty"`
	// Locale is the recipient's language (BCP 47).
	Locale string `json:"locale,omitempty"`
}

// SharePointTarget names the document library a delivery files the document in.
type SharePointTarget struct {
	SiteURL     string `json:"siteUrl"`
	LibraryPath string `json:"libraryPath"`
	FolderPath  string `json:"folderPath,omitempty"`
}

// WorkflowSettings is templateSettings.workflow (spec 001, create-workflow request body).
type WorkflowSettings struct {
	SchemaPath       string              `json:"schemaPath,omitempty"`
	Recipients       []WorkflowRecipient `json:"recipients,omitempty"`
	RequireOTP       bool                `json:"requireOtp"`
	OrganizationName string              `json:"organizationName,omitempty"`
	Message          string              `json:"message,omitempty"`
}

// WorkflowRecipient receives a workflow's invitation.
type WorkflowRecipient struct {
	Email       string `json:"email"`
	DisplayName string `json:"displayName,omitempty"`
	Locale      string `json:"locale,omitempty"` // the participant's language (BCP 47)
}

// settingsBlocks are the four block keys, as template.yaml and templateSettings name them.
var settingsBlocks = []string{"distribution", "esign", "delivery", "workflow"}

// decodeSettings decodes the blocks of tree (a mapping holding at most the four keys; others
// are the caller's to refuse).
func decodeSettings(tree *value, path string) (Settings, *problem) {
	var s Settings
	blocks := map[string]any{"distribution": &s.Distribution, "esign": &s.ESign, "delivery": &s.Delivery, "workflow": &s.Workflow}
	for _, k := range settingsBlocks {
		if p := decode(tree.get(k), blocks[k], joinKey(path, k)); p != nil {
			return Settings{}, p
		}
	}
	return s, nil
}

// Merge is the package's default settings overridden by a request's templateSettings (override
// may be empty or JSON null): inside each block, a key the request gives replaces the
// default's value of that key. Errors: 400 validation naming the full JSON path under field
// (the templateSettings object's path) for an unknown key, a wrong type or invalid JSON.
func (p *Package) Merge(field string, override json.RawMessage) (Settings, error) {
	bad := func(pr *problem) error {
		path, msg := pr.field()
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field(joinKey(field, path), msg))
	}
	var top *value
	if len(override) > 0 {
		v, pr := fromJSON(override)
		if pr != nil {
			return Settings{}, bad(pr)
		}
		top = v
	}
	if top != nil && top.kind != kNull {
		if top.kind != kMap {
			return Settings{}, bad(at(nil, "", "must be an object"))
		}
		for _, k := range top.keys {
			if !isBlock(k.text) {
				return Settings{}, bad(&problem{unknown: k.text})
			}
		}
		for _, k := range p.Locked {
			block, key, _ := strings.Cut(k, ".")
			// the key itself, or its whole block replaced by null
			if b := top.get(block); b != nil && (b.kind == kNull || b.get(key) != nil) {
				e := apperr.New(apperr.KindForbidden, CodeTemplateLocked, "the template locks %s", k)
				e.Fields = []apperr.FieldError{apperr.Field(joinKey(field, k), "is locked by the template")}
				return Settings{}, e
			}
		}
	}
	merged := &value{kind: kMap}
	for _, k := range settingsBlocks {
		b := p.defaults.get(k)
		if t := top.get(k); t != nil {
			b = overlay(b, t)
		}
		if b != nil {
			merged.keys, merged.vals = append(merged.keys, &value{kind: kString, text: k}), append(merged.vals, b)
		}
	}
	s, pr := decodeSettings(merged, "")
	if pr != nil {
		return Settings{}, bad(pr)
	}
	return s, nil
}

func isBlock(k string) bool {
	for _, b := range settingsBlocks {
		if b == k {
			return true
		}
	}
	return false
}
