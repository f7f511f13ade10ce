package portalapi

import (
	"net/url"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/tokens"
)

type consentAccepted struct {
	ID         string `json:"id"`
	Version    string `json:"version"`
	AcceptedAt string `json:"acceptedAt"`
}

// tokenFields is in every portal answer: the refreshed access token and its expiry.
type tokenFields struct {
	AccessToken          string `json:"accessToken"`
	AccessTokenExpiresAt string `json:"accessTokenExpiresAt"`
}

// sessionView is what activate and GET session answer: what the portal shows.
type sessionView struct {
	tokenFields
	GroupID           string                   `json:"groupId"`
	SessionID         string                   `json:"sessionId"`
	SlotIndex         int                      `json:"slotIndex"`
	DocumentName      string                   `json:"documentName"`
	DocType           string                   `json:"docType"`
	Role              string                   `json:"role"`
	NamePrefill       string                   `json:"namePrefill,omitempty"`
	Fields            []esign.ManifestField    `json:"fields"`
	Locale            string                   `json:"locale,omitempty"` // the slot's, from the create body
	Language          string                   `json:"language"`         // of the consent statements (viewLanguage)
	ConsentStatements []esign.ConsentStatement `json:"consentStatements"`
	ConsentsAccepted  []consentAccepted        `json:"consentsAccepted"`
	OTPRequired       bool                     `json:"otpRequired"`
	OTPChannel        string                   `json:"otpChannel"`
	SigningMode       string                   `json:"signingMode"`
	SlotState         string                   `json:"slotState"`
	SessionState      string                   `json:"sessionState"`
	ExpiresAt         string                   `json:"expiresAt"`
	ViewOnly          bool                     `json:"viewOnly"`
	DocumentURL       string                   `json:"documentUrl"`
}

// stateView is what viewed, consent and decline answer.
type stateView struct {
	tokenFields
	SlotState        string            `json:"slotState"`
	SessionState     string            `json:"sessionState"`
	ConsentsAccepted []consentAccepted `json:"consentsAccepted"`
}

func accepted(sl *esign.Slot) []consentAccepted {
	out := []consentAccepted{}
	for _, c := range sl.Consents {
		out = append(out, consentAccepted{ID: c.ID, Version: c.Version, AcceptedAt: c.AcceptedAt})
	}
	return out
}

func newTokenFields(tok string, issued tokens.PortalAccess) tokenFields {
	return tokenFields{AccessToken: tok, AccessTokenExpiresAt: ts(issued.ExpiresAt)}
}

func viewOf(s *esign.Session, sl *esign.Slot, tok string, issued tokens.PortalAccess, secondary bool, lang string) sessionView {
	fields := esign.ForRole(s.Manifest, sl.Role)
	if fields == nil {
		fields = []esign.ManifestField{}
	}
	ch := sl.EffectiveOTPChannel() // e-mail on a device that took a slot without OTP over
	return sessionView{
		tokenFields: newTokenFields(tok, issued), GroupID: s.GroupID, SessionID: sl.SessionID, SlotIndex: sl.Index,
		DocumentName: s.Title(), DocType: s.DocType, Role: sl.Role, NamePrefill: sl.NamePrefill, Fields: fields,
		Locale: sl.Locale, Language: lang, ConsentStatements: esign.StatementsIn(lang), ConsentsAccepted: accepted(sl), OTPRequired: sl.RequiresOTP(),
		OTPChannel: string(ch), SigningMode: string(s.SigningMode), SlotState: string(sl.State),
		SessionState: string(s.State), ExpiresAt: ts(s.ExpiresAt), ViewOnly: secondary,
		DocumentURL: PathDocument + url.PathEscape(tok),
	}
}
