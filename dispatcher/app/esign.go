package app

import (
	"net/http"
	"time"

	"github.com/esign-svc/esign/dispatcher/callback"
	"github.com/esign-svc/esign/dispatcher/esignapi"
	"github.com/esign-svc/esign/dispatcher/portal"
	"github.com/esign-svc/esign/shared/esign"
)

// The signing sessions: requester routes, portal routes with the document proxy, the callback.
func init() {
	areas = append(areas, area{
		name:    "esign",
		invoked: []string{"CreateSession", "ResendInvite", "RevokeSession", "PortalDecline", "Callback"},
		routes: func(mux *http.ServeMux, d *Deps) error {
			(&esignapi.API{
				Creator: &esign.Creator{Store: d.Sessions, Docs: d.Blobs, Tokens: d.Tokens, Hasher: d.Config.EmailHasher,
					Cipher: d.Config.PIICipher, PortalURL: d.Config.PortalURL, Now: time.Now},
				Store: d.Sessions, Blobs: d.Blobs, Tokens: d.Tokens, Hasher: d.Config.EmailHasher, Cipher: d.Config.PIICipher,
				Verifier: d.Verifier, Licence: d.Licence, PortalURL: d.Config.PortalURL, Now: time.Now,
			}).Routes(mux)
			(&portal.API{
				Store: d.Sessions, Blobs: d.Blobs, Tokens: d.Tokens, Lapsed: portal.LapsedCodec(d.Config.Tokens),
				PortalOrigin: d.Config.PortalOrigin, Now: time.Now,
			}).Routes(mux)
			(&callback.API{Store: d.Sessions, Tokens: d.Tokens, Lapsed: portal.LapsedCodec(d.Config.Tokens), Secrets: d.Config.CallbackSecrets, Now: time.Now}).Routes(mux)
			return nil
		},
	})
}
