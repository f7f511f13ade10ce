// Package callback serves POST /api/esign/callback, the signed callback the portal posts when a
// signer submits (DESIGN 4): the X-Esign-Signature HMAC is verified over the raw body before
// anything is parsed, each callback id is accepted once per session, and the signature, the
// completed fields and the consents are stored with the slot's transition to signed in one
// transaction. When the last required slot is signed the session goes to sealing and the seal
// message is queued.
//
// The function is invoked (it has queue outputs), so the body reaches the handler through the
// Functions invocation payload: the host passes a JSON request body as its text, and funcproto
// gives the handler exactly those bytes. The HMAC is computed over them: the portal must sign
// the exact bytes it sends, and the body must be sent as application/json text (a host that
// re-serialised a parsed object would break the signature, which then fails closed with 401).
package callback

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// Path is the callback route.
const Path = "/api/esign/callback"

// Errors of the callback besides the state machine's, the tokens' and callbacksig's.
var (
	ErrWrongSlot = &apperr.Error{Kind: apperr.KindForbidden, Code: "token_wrong_slot",
		Detail: "the access token does not belong to this signer's slot"}
	ErrSecondary = &apperr.Error{Kind: apperr.KindConflict, Code: esign.CodeDeviceSecondary,
		Detail: "the signing session moved to another device; this one can only view"}
	ErrConsentMismatch = &apperr.Error{Kind: apperr.KindConflict, Code: "consent_mismatch",
		Detail: "the consents do not match what the signer accepted in the portal"}
	ErrAlreadySigned = &apperr.Error{Kind: apperr.KindConflict, Code: "slot_already_signed",
		Detail: "this slot is already signed"}
)

// API holds what the callback needs.
type API struct {
	Store  *sessionstore.Store
	Tokens *tokens.Codec
	// Lapsed verifies access tokens past their own expiry, only to answer 410 for a session that
	// ended (portal.LapsedCodec); nil: an expired token is 401.
	Lapsed  *tokens.Codec
	Secrets []string // PORTAL_CALLBACK_SECRETS, current first
	Now     func() time.Time
}

// Routes registers the callback route on mux (an invoked function: queue outputs seal, notify).
func (a *API) Routes(mux *http.ServeMux) {
	mux.Handle("POST "+Path, web.Handle(a.callback))
}

type response struct {
	GroupID      string `json:"groupId"`
	SlotIndex    int    `json:"slotIndex"`
	SlotState    string `json:"slotState"`
	SessionState string `json:"sessionState"`
}

// callback is POST /api/esign/callback. Errors, each leaving everything unchanged: 413 body over
// 2 MiB or signature_too_large; 401 callback_signature_missing / _invalid / _stale (checked
// before the body is parsed), callback_replayed, token_invalid / token_expired; 400 after the
// HMAC for what web.DecodeJSONBody refuses (unsupported_media_type, a body that is not one JSON
// object) or a field at fault (named), fields not matching the manifest; 403
// token_wrong_slot; 404 unknown sessionId; 409 device_secondary, consent_mismatch,
// consent_required, not_viewed, slot_already_signed, slot_not_open, session_not_live; 410 expired or
// cancelled.
func (a *API) callback(w http.ResponseWriter, r *http.Request) error {
	raw, err := web.ReadBody(r, MaxBody) // the raw bytes: the HMAC is over them
	if err != nil {
		return err
	}
	now := a.Now().UTC()
	if err := callbacksig.Verify(r.Header.Get(callbacksig.Header), raw, now, a.Secrets); err != nil {
		if _, ok := apperr.As(err); ok {
			return err
		}
		return apperr.Wrap(err, apperr.KindInternal, "callback_secrets_missing", "the callback cannot be verified")
	}
	p, err := parseBody(r, raw)
	if err != nil {
		return err
	}
	claims, err := a.Tokens.VerifyPortalAccess(p.AccessToken)
	if err != nil {
		if e, ok := apperr.As(err); ok && e.Code == tokens.CodeExpired {
			if gone := a.goneErr(r.Context(), p, now); gone != nil {
				return gone
			}
		}
		return err
	}
	// The access token we signed names the session and the slot: no index row, no extra read.
	// The HMAC-signed body must name the same slot (checked on the loaded session below).
	groupID, idx := claims.GroupID, claims.SlotIndex
	fieldsJSON, err := json.Marshal(p.Fields)
	if err != nil {
		return apperr.Wrap(err, apperr.KindInternal, "encode_failed", "could not encode the fields")
	}
	var already bool
	s, slots, ch, err := a.Store.Update(r.Context(), groupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, []tablestore.Op, error) {
		already = false
		if err := bodySlot(slots, claims, p.SessionID); err != nil {
			return esign.Change{}, nil, err
		}
		sl := &slots[idx]
		if sl.State == esign.SlotSigned {
			// An authentic callback for a signed slot: commit only its id, so a replay is told
			// apart (401 callback_replayed) from a second submission (409).
			already = true
			return esign.Change{}, []tablestore.Op{sessionstore.CallbackOnce(groupID, p.CallbackID)}, nil
		}
		return a.sign(s, slots, sl, claims, p, fieldsJSON, now)
	})
	if err != nil {
		return err
	}
	if already {
		return ErrAlreadySigned
	}
	if err := effects.Emit(r.Context(), s, slots, ch, false); err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, response{GroupID: s.GroupID, SlotIndex: idx,
		SlotState: string(slots[idx].State), SessionState: string(s.State)})
}

// bodySlot checks that the body's sessionId is the slot the access token names. Any other
// sessionId, whether another slot's, another session's or unknown, is 403 token_wrong_slot: the
// token answers which slot the caller may sign, and no index is read to say more.
func bodySlot(slots []esign.Slot, claims tokens.PortalAccess, sessionID string) error {
	if claims.SlotIndex < 0 || claims.SlotIndex >= len(slots) ||
		subtle.ConstantTimeCompare([]byte(slots[claims.SlotIndex].SessionID), []byte(sessionID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(claims.SessionID), []byte(sessionID)) != 1 {
		return ErrWrongSlot
	}
	return nil
}

// sign is the transaction's step: the session gate, the device, the fields against the
// manifest, the consents against what the slot recorded, then esign.Sign with the signature
// rows and the callback id.
func (a *API) sign(s *esign.Session, slots []esign.Slot, sl *esign.Slot, claims tokens.PortalAccess,
	p *parsed, fieldsJSON []byte, now time.Time) (esign.Change, []tablestore.Op, error) {
	if err := esign.CheckLive(s, now); err != nil {
		return esign.Change{}, nil, err
	}
	if claims.SessionID != sl.SessionID || claims.Generation > sl.Generation {
		return esign.Change{}, nil, ErrWrongSlot
	}
	if claims.Generation < sl.Generation {
		return esign.Change{}, nil, ErrSecondary
	}
	if probs := esign.CheckFields(s.Manifest, sl.Role, p.Fields); len(probs) > 0 {
		fe := make([]apperr.FieldError, len(probs))
		for i, pr := range probs {
			fe[i] = apperr.Field(pr.Field, pr.Message)
		}
		return esign.Change{}, nil, apperr.Invalid("invalid_fields", fe...)
	}
	if err := matchConsents(sl, p.AcceptedAt); err != nil {
		return esign.Change{}, nil, err
	}
	consentsJSON, err := json.Marshal(sl.Consents)
	if err != nil {
		return esign.Change{}, nil, apperr.Wrap(err, apperr.KindInternal, "encode_failed", "could not encode the consents")
	}
	ch, err := esign.Sign(s, slots, sl.Index, now, esign.SignInput{SignerName: p.SignerName, IP: p.IP, UserAgent: p.UserAgent,
		Meta: map[string]any{"callbackId": p.CallbackID, "fields": len(p.Fields), "consentVersion": esign.ConsentVersion,
			"signatureBytes": len(p.PNG), "signatureWidth": p.Width, "signatureHeight": p.Height}})
	if err != nil {
		return ch, nil, err
	}
	ch.By(esign.Actor{Kind: "signer", ID: sl.SessionID, IP: p.IP, UserAgent: p.UserAgent})
	sigOp, err := sessionstore.SignatureOp(s.GroupID, sl.Index, sessionstore.Signature{PNG: p.PNG,
		Fields: string(fieldsJSON), Consents: string(consentsJSON)})
	if err != nil {
		return ch, nil, err
	}
	return ch, []tablestore.Op{sigOp, sessionstore.CallbackOnce(s.GroupID, p.CallbackID)}, nil
}

// matchConsents wants every reported acceptance to be one the slot recorded, at the same
// instant. A slot that lacks one is left to esign.Sign (409 consent_required).
func matchConsents(sl *esign.Slot, reported map[string]time.Time) error {
	for _, rec := range sl.Consents {
		if rec.Version != esign.ConsentVersion {
			continue
		}
		at, ok := reported[rec.ID]
		if !ok {
			continue
		}
		want, err := time.Parse(time.RFC3339Nano, rec.AcceptedAt)
		if err != nil || !want.Equal(at) {
			return ErrConsentMismatch
		}
	}
	return nil
}

// goneErr is the 410 of the session the (HMAC-verified) body's access token names, when that
// session has ended (expired or cancelled), else nil. An access token never outlives its
// session, so a signer submitting after the session's end always holds an expired token; like
// the portal routes, the callback then answers the session's end (410, as the spec wants for a
// link used after expiry) rather than 401 token_expired. The token must still be ours (its
// signature is checked, only its expiry is lapsed) and name the body's slot; nothing else is
// done with it.
func (a *API) goneErr(ctx context.Context, p *parsed, now time.Time) error {
	if a.Lapsed == nil {
		return nil
	}
	old, err := a.Lapsed.VerifyPortalAccess(p.AccessToken)
	if err != nil || subtle.ConstantTimeCompare([]byte(old.SessionID), []byte(p.SessionID)) != 1 {
		return nil
	}
	s, _, err := a.Store.Load(ctx, old.GroupID)
	if err != nil {
		return nil
	}
	if err := esign.CheckLive(s, now); apperr.KindOf(err) == apperr.KindGone {
		return err
	}
	return nil
}
