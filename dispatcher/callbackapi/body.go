package callbackapi

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/text"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// Limits of the callback body.
const (
	MaxBody          = 2 << 20 // DESIGN 5: 2 MiB callback with the PNG
	MaxSignerName    = 200     // characters
	MaxUserAgent     = 512     // bytes
	MaxSignatureSide = 4096    // pixels, each way
	MaxFields        = 200
)

// ErrSignatureTooLarge is the 413 for a signature image beyond esign.MaxSignaturePNG.
var ErrSignatureTooLarge = &apperr.Error{Kind: apperr.KindTooLarge, Code: "signature_too_large",
	Detail: "the signature image is larger than the accepted size"}

var callbackIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`)

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// Consent is one consent acceptance as the portal reports it.
type Consent struct {
	ID         string `json:"id"`
	Version    string `json:"version"`
	AcceptedAt string `json:"acceptedAt"`
}

// Body is the callback's JSON body.
type Body struct {
	CallbackID   string                 `json:"callbackId"`
	SessionID    string                 `json:"sessionId"`
	AccessToken  string                 `json:"accessToken"`
	SignerName   string                 `json:"signerName"`
	SignaturePNG string                 `json:"signaturePng"`
	Fields       []esign.CompletedField `json:"fields"`
	Consents     []Consent              `json:"consents"`
	IP           string                 `json:"ip"`
	UserAgent    string                 `json:"userAgent"`
}

// parsed is a body that passed every check that needs no storage.
type parsed struct {
	Body
	PNG           []byte
	Width, Height int
	AcceptedAt    map[string]time.Time // consent id -> acceptance time the portal reports
}

// parseBody decodes and checks r's raw body (after its HMAC was verified) under the JSON
// routes' rules (web.DecodeJSONBody: JSON content type, one object, valid UTF-8), and
// signerName and userAgent one line of text under shared/text's rule (the fields' values are
// checked against the manifest by esign.CheckFields, under the same rule). Errors: 400
// unsupported_media_type, invalid_json / unknown_field / invalid_request naming each field at
// fault ("body" for a value that is not an object); 413 signature_too_large.
func parseBody(r *http.Request, raw []byte) (*parsed, error) {
	var b Body
	if err := web.DecodeJSONBody(r, raw, &b); err != nil {
		return nil, err
	}
	p := &parsed{Body: b, AcceptedAt: map[string]time.Time{}}
	var bad []apperr.FieldError
	add := func(f, m string) { bad = append(bad, apperr.Field(f, m)) }
	if !callbackIDPattern.MatchString(b.CallbackID) {
		add("callbackId", "must be 16 to 128 letters, digits, '-' or '_' (a UUID fits)")
	}
	if _, err := uuid.Parse(b.SessionID); err != nil || len(b.SessionID) != 36 {
		add("sessionId", "must be the slot's sessionId (a UUID)")
	}
	if b.AccessToken == "" || len(b.AccessToken) > tokens.MaxTokenLen {
		add("accessToken", "the signer's portal access token is required")
	}
	name := strings.TrimSpace(b.SignerName)
	if msg := text.Problem(name, text.Line); msg != "" {
		add("signerName", msg)
	} else if n := utf8.RuneCountInString(name); n < 1 || n > MaxSignerName {
		add("signerName", "must be 1 to 200 characters")
	}
	p.SignerName = name
	if ip, err := netip.ParseAddr(b.IP); err != nil || ip.Zone() != "" {
		add("ip", "must be the signer's IPv4 or IPv6 address")
	}
	if len(b.UserAgent) > MaxUserAgent {
		add("userAgent", "must be text of at most 512 bytes")
	} else if msg := text.Problem(b.UserAgent, text.Line); msg != "" {
		add("userAgent", msg)
	}
	if len(b.Fields) > MaxFields {
		add("fields", "too many fields")
	}
	bad = append(bad, checkConsents(b.Consents, p.AcceptedAt)...)
	if len(bad) > 0 {
		return nil, apperr.Invalid(apperr.CodeInvalidRequest, bad...)
	}
	if err := p.decodePNG(); err != nil {
		return nil, err
	}
	return p, nil
}

// checkConsents wants exactly the three current statements, each once, with the current
// version and an RFC 3339 acceptance time.
func checkConsents(cs []Consent, at map[string]time.Time) []apperr.FieldError {
	var bad []apperr.FieldError
	for i, c := range cs {
		f := "consents[" + strconv.Itoa(i) + "]"
		st, ok := esign.StatementByID(c.ID)
		switch {
		case !ok:
			bad = append(bad, apperr.Field(f+".id", "is not a consent statement"))
			continue
		case c.Version != st.Version:
			bad = append(bad, apperr.Field(f+".version", "must be the current version "+esign.ConsentVersion))
		}
		if _, dup := at[c.ID]; dup {
			bad = append(bad, apperr.Field(f+".id", "is given twice"))
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, c.AcceptedAt)
		if err != nil {
			bad = append(bad, apperr.Field(f+".acceptedAt", "must be an RFC 3339 time"))
		}
		at[c.ID] = t
	}
	for _, st := range esign.ConsentStatements {
		if _, ok := at[st.ID]; !ok {
			bad = append(bad, apperr.Field("consents", "the statement "+st.ID+" must be accepted"))
		}
	}
	return bad
}

// decodePNG checks the signature image: standard base64 of a PNG of at most MaxSignaturePNG
// bytes whose header decodes, with sides of 1 to MaxSignatureSide pixels.
func (p *parsed) decodePNG() error {
	if p.SignaturePNG == "" {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("signaturePng", "the signature image is required"))
	}
	if base64.StdEncoding.DecodedLen(len(p.SignaturePNG)) > esign.MaxSignaturePNG+2 {
		return ErrSignatureTooLarge
	}
	img, err := base64.StdEncoding.DecodeString(p.SignaturePNG)
	if err != nil {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("signaturePng", "must be standard base64"))
	}
	if len(img) > esign.MaxSignaturePNG {
		return ErrSignatureTooLarge
	}
	if !bytes.HasPrefix(img, pngMagic) {
		return apperr.Invalid("invalid_signature", apperr.Field("signaturePng", "is not a PNG image"))
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return apperr.Invalid("invalid_signature", apperr.Field("signaturePng", "the PNG image cannot be read"))
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxSignatureSide || cfg.Height > MaxSignatureSide {
		return apperr.Invalid("invalid_signature", apperr.Field("signaturePng", "the image must be 1 to 4096 pixels each way"))
	}
	p.PNG, p.Width, p.Height = img, cfg.Width, cfg.Height
	return nil
}
