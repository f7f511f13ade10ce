package deliveryapi

import (
	"context"
	"errors"
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

// recipient verifies the route's token, loads its session and answers 410 when the session has
// ended, before anything else. Errors: 401 token_missing, token_invalid, token_expired,
// token_wrong_kind; 410 delivery_expired, delivery_revoked; 404 delivery_not_found.
func (a *API) recipient(r *http.Request) (*delivery.Session, error) {
	id := r.PathValue("deliveryId")
	tok := r.URL.Query().Get("t")
	if tok == "" {
		return nil, ErrNoToken
	}
	claims, err := a.Tokens.VerifyDelivery(tok)
	if err != nil {
		return nil, a.lapsed(r.Context(), tok, id, err)
	}
	if claims.DeliveryID != id {
		return nil, ErrOtherToken
	}
	s, err := a.Store.Load(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if err := delivery.CheckLive(s, a.now()); err != nil {
		return nil, err
	}
	return s, nil
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
	s, lerr := a.Store.Load(ctx, id)
	if lerr != nil {
		return err
	}
	if gone := delivery.CheckLive(s, a.now()); gone != nil {
		return gone
	}
	return err
}

// act authorises the recipient and runs a transition in one transaction with its events.
func (a *API) act(r *http.Request, step func(s *delivery.Session) (delivery.Change, error)) (*delivery.Session, error) {
	s, err := a.recipient(r)
	if err != nil {
		return nil, err
	}
	who := recipientActor(r, s)
	s, _, err = a.Store.Update(r.Context(), s.DeliveryID, func(s *delivery.Session) (delivery.Change, error) {
		ch, err := step(s)
		ch.By(who)
		return ch, err
	})
	return s, err
}

type metadataView struct {
	DeliveryID    string `json:"deliveryId"`
	DocumentName  string `json:"documentName"`
	RecipientName string `json:"recipientName"`
	RecipientRole string `json:"recipientRole"`
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
	s, err := a.recipient(r)
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, metadataView{
		DeliveryID: s.DeliveryID, DocumentName: s.DocumentName, RecipientName: s.RecipientName,
		RecipientRole: s.RecipientRole, RequesterOrg: s.RequesterOrg, Message: s.Message, Mode: string(s.Mode),
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

// issueSAS checks the document gate, makes a read-only URL for SASTTL (never beyond the
// session's expiry) and records delivery.sas_issued; the URL is returned only once recorded.
// The URL points at the session's own copy of the document (delivery.CopyPath, made by the
// first issue), never at the source: revoke deletes the copy, which ends every URL issued.
func (a *API) issueSAS(w http.ResponseWriter, r *http.Request, via string) error {
	if err := web.NoBody(r); err != nil {
		return err
	}
	s, err := a.recipient(r)
	if err != nil {
		return err
	}
	now := a.now()
	if err := delivery.CheckDocument(s, now); err != nil {
		return err
	}
	ttl := min(SASTTL, s.ExpiresAt.Sub(now))
	if ttl < time.Second {
		return delivery.ErrExpired
	}
	link, until, err := a.copyURL(r.Context(), s, ttl, via == "download")
	if err != nil {
		return err
	}
	if _, err := a.act(r, func(s *delivery.Session) (delivery.Change, error) {
		return delivery.IssueSAS(s, a.now(), until, via)
	}); err != nil {
		if errors.Is(err, delivery.ErrRevoked) { // revoked meanwhile: its delete may have run before the copy
			a.dropCopy(r.Context(), s)
		}
		return err
	}
	return web.JSON(w, http.StatusOK, sasView{SASURL: link, ExpiresAt: stamp(until)})
}

// copyURL is a read URL of the session's copy of its document, copying the source first when
// the copy is not there yet; for a download (attachment) the URL's answers carry
// Content-Disposition: attachment with the document's name, so a browser saves the file.
// Errors: 410 document_gone when the source is no longer stored.
func (a *API) copyURL(ctx context.Context, s *delivery.Session, ttl time.Duration, attachment bool) (string, time.Time, error) {
	dst := delivery.CopyPath(s)
	readURL := func() (string, time.Time, error) {
		if attachment {
			return a.Blobs.DownloadURL(ctx, dst.Container, dst.Name, ttl, s.DocumentName)
		}
		return a.Blobs.ReadURL(ctx, dst.Container, dst.Name, ttl)
	}
	link, until, err := readURL()
	if apperr.KindOf(err) != apperr.KindNotFound {
		return link, until, err
	}
	src, err := delivery.SourceOf(s)
	if err != nil {
		return "", time.Time{}, apperr.Wrap(err, apperr.KindInternal, "bad_stored_path", "the delivery's document path is invalid")
	}
	err = a.Blobs.Copy(ctx, src, dst)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return "", time.Time{}, &apperr.Error{Kind: apperr.KindGone, Code: "document_gone", Detail: "the document is no longer stored", Err: err}
	}
	if err != nil {
		return "", time.Time{}, err
	}
	return readURL()
}

// dropCopy deletes the session's copy of its document, on a context that outlives the
// caller's; a failure is left to the copies' lifecycle rule (infra) and to a repeated revoke.
func (a *API) dropCopy(ctx context.Context, s *delivery.Session) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropTimeout)
	defer cancel()
	_ = a.deleteCopy(ctx, s)
}

// dropTimeout bounds dropCopy.
const dropTimeout = 10 * time.Second

// deleteCopy deletes the session's copy wherever it may lie (delivery.CopyPaths).
func (a *API) deleteCopy(ctx context.Context, s *delivery.Session) error {
	for _, c := range delivery.CopyPaths(s) {
		if err := a.Blobs.DeleteIfExists(ctx, c.Container, c.Name); err != nil {
			return err
		}
	}
	return nil
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
	if req.EventType != "opened" && req.EventType != "downloaded" {
		bad = append(bad, apperr.Field("eventType", "must be opened or downloaded"))
	}
	if req.IP != "" && net.ParseIP(req.IP) == nil {
		bad = append(bad, apperr.Field("ip", "must be an IPv4 or IPv6 address"))
	}
	if len(bad) > 0 {
		return apperr.Invalid(apperr.CodeInvalidRequest, bad...)
	}
	_, err := a.act(r, func(s *delivery.Session) (delivery.Change, error) {
		var ch delivery.Change
		var err error
		if req.EventType == "opened" {
			ch, err = delivery.Open(s, a.now())
		} else {
			ch, err = delivery.Download(s, a.now())
		}
		if err == nil && req.IP != "" {
			ch.Events[0].Data["reportedIp"] = req.IP
		}
		return ch, err
	})
	if err != nil {
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
