package deliveryapi

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// Errors of the recipient routes besides the domain's and the tokens'.
var (
	ErrNoToken    = &apperr.Error{Kind: apperr.KindUnauthenticated, Code: tokens.CodeMissing, Detail: "pass the delivery access token as the query parameter t"}
	ErrOtherToken = &apperr.Error{Kind: apperr.KindUnauthenticated, Code: tokens.CodeInvalid, Detail: "the access token is not for this delivery"}
)

// token verifies the route's delivery access token and answers the deliveryId it names.
// Errors: 401 token_missing, token_invalid, token_expired, token_wrong_kind; 410
// delivery_expired, delivery_revoked for a token that lapsed with its session.
func (a *API) token(r *http.Request) (string, error) {
	id := r.PathValue("deliveryId")
	tok := r.URL.Query().Get("t")
	if tok == "" {
		return "", ErrNoToken
	}
	claims, err := a.Tokens.VerifyDelivery(tok)
	if err != nil {
		return "", a.lapsed(r.Context(), tok, id, err)
	}
	if claims.DeliveryID != id {
		return "", ErrOtherToken
	}
	return id, nil
}

// lapsed turns an expired token of a session that has ended into that session's 410; any other
// failure stays as it was (401).
func (a *API) lapsed(ctx context.Context, tok, id string, err error) error {
	e, ok := apperr.As(err)
	if !ok || e.Code != tokens.CodeExpired || a.Lapsed == nil {
		return err
	}
	old, lerr := a.Lapsed.VerifyDelivery(tok)
	if lerr != nil || old.DeliveryID != id {
		return err
	}
	if gone := a.Deliveries.Ended(ctx, id); gone != nil {
		return gone
	}
	return err
}

type metadataView struct {
	DeliveryID    string `json:"deliveryId"`
	DocumentName  string `json:"documentName"`
	RecipientName string `json:"recipientName"`
	RecipientRole string `json:"recipientRole"`
	Locale        string `json:"locale,omitempty"` // the recipient's language from the create body
	RequesterOrg  string `json:"requesterOrg"`
	Message       string `json:"message,omitempty"`
	Mode          string `json:"mode"`
	SentAt        string `json:"sentAt,omitempty"`
	ExpiresAt     string `json:"expiresAt"`
	State         string `json:"state"`
	ViewCount     int    `json:"viewCount"`
	RequireOTP    bool   `json:"requireOtp"`
	OTPVerified   bool   `json:"otpVerified"`
}

// metadata is GET /api/delivery/{deliveryId}?t=: what the portal shows. It changes nothing.
// Errors: 401; 404; 410.
func (a *API) metadata(w http.ResponseWriter, r *http.Request) error {
	if err := web.NoBody(r); err != nil {
		return err
	}
	id, err := a.token(r)
	if err != nil {
		return err
	}
	s, err := a.Deliveries.Live(r.Context(), id)
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, metadataView{
		DeliveryID: s.DeliveryID, DocumentName: s.DocumentName, RecipientName: s.RecipientName,
		RecipientRole: s.RecipientRole, Locale: s.RecipientLocale, RequesterOrg: s.RequesterOrg, Message: s.Message, Mode: string(s.Mode),
		SentAt: stamp(s.SentAt), ExpiresAt: stamp(s.ExpiresAt), State: string(s.StateAt(a.now())), ViewCount: s.ViewCount,
		RequireOTP: s.RequireOTP, OTPVerified: s.OTPVerified(),
	})
}

type sasView struct {
	SASURL    string `json:"sasUrl"`
	ExpiresAt string `json:"expiresAt"`
}

// sas is GET /api/delivery/{deliveryId}/sas?t=. Errors: 401; 404; 410; 403 otp_required.
func (a *API) sas(w http.ResponseWriter, r *http.Request) error { return a.issueSAS(w, r, "sas") }

// download is POST /api/delivery/{deliveryId}/download?t=: the same as sas, but the URL's
// answers carry Content-Disposition: attachment with the document's name.
func (a *API) download(w http.ResponseWriter, r *http.Request) error {
	return a.issueSAS(w, r, "download")
}

// issueSAS authorises the recipient and hands out a read-only URL of the session's copy of its
// document (delivery.Deliveries.IssueLink), recorded as delivery.sas_issued {via}.
func (a *API) issueSAS(w http.ResponseWriter, r *http.Request, via string) error {
	if err := web.NoBody(r); err != nil {
		return err
	}
	id, err := a.token(r)
	if err != nil {
		return err
	}
	link, err := a.Deliveries.IssueLink(r.Context(), id, via, via == "download", recipientActor(r, id))
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, sasView{SASURL: link.URL, ExpiresAt: stamp(link.ExpiresAt)})
}

type accessRequest struct {
	EventType string `json:"eventType"`
	IP        string `json:"ip"`
}

// access is POST /api/delivery/{deliveryId}/access?t= {eventType: opened|downloaded, ip}: opened
// sets openedAt (first) and counts a view; downloaded sets downloadedAt (first) and is refused
// (403 otp_required) before the OTP gate opened. ip, when given, must be an IP address; it is
// recorded as reportedIp beside the caller's address. Errors: 400 eventType or ip; 401; 404; 410;
// 403.
func (a *API) access(w http.ResponseWriter, r *http.Request) error {
	var req accessRequest
	if err := web.DecodeJSON(r, 4<<10, &req); err != nil {
		return err
	}
	var bad []apperr.FieldError
	if req.EventType != delivery.AccessOpened && req.EventType != delivery.AccessDownloaded {
		bad = append(bad, apperr.Field("eventType", "must be opened or downloaded"))
	}
	if req.IP != "" && net.ParseIP(req.IP) == nil {
		bad = append(bad, apperr.Field("ip", "must be an IPv4 or IPv6 address"))
	}
	if len(bad) > 0 {
		return apperr.Invalid(apperr.CodeInvalidRequest, bad...)
	}
	id, err := a.token(r)
	if err != nil {
		return err
	}
	if err := a.Deliveries.Access(r.Context(), id, req.EventType, req.IP, recipientActor(r, id)); err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, map[string]bool{"ok": true})
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
