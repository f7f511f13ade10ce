package app

import (
	"net/http"
	"time"

	"github.com/esign-svc/esign/dispatcher/esignapi"
)

// The admin seal routes: re-queue a failed or stuck seal (RetrySeal, queue output "seal").
func init() {
	areas = append(areas, area{
		name:    "seal-admin",
		invoked: []string{"RetrySeal"},
		routes: func(mux *http.ServeMux, d *Deps) error {
			(&esignapi.API{
				Store: d.Sessions, Blobs: d.Blobs, Tokens: d.Tokens, Hasher: d.Config.EmailHasher, Cipher: d.Config.PIICipher,
				Verifier: d.Verifier, Licence: d.Licence, PortalURL: d.Config.PortalURL, Now: time.Now,
			}).SealAdminRoutes(mux)
			return nil
		},
	})
}
