package server

import (
	"net/http"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/portalclient"
	"github.com/esign-svc/esign/shared/web"
)

const maxPurgeBody = 64 << 10

// purge is POST {base}/v1/purge, the processor's request after a seal (shared/portalclient): the
// X-Esign-Signature header is checked over the raw body with every secret, then the slots'
// held outcomes are dropped. 204 when something was dropped, 404 when nothing was held (the
// client counts both as done). Errors: 401 callback_signature_* for a bad or stale signature;
// 400 naming the field at fault; 413.
func (s *Server) purge(w http.ResponseWriter, r *http.Request) error {
	raw, err := web.ReadBody(r, maxPurgeBody)
	if err != nil {
		return err
	}
	if err := callbacksig.Verify(r.Header.Get(callbacksig.Header), raw, s.cfg.Now(), s.cfg.Secrets); err != nil {
		return err
	}
	var req portalclient.PurgeRequest
	if err := web.DecodeJSONBody(r, raw, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	if s.attempts.forget(req.SessionIDs) == 0 {
		return apperr.New(apperr.KindNotFound, "nothing_held", "the portal holds nothing for these slots")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
