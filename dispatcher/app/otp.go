package app

import (
	"net/http"
	"time"

	"github.com/esign-svc/esign/dispatcher/portal"
)

// The signer's OTP challenge and the cross-device transfer (portal routes; the portal area in
// esign.go answers the CORS preflights of /api/esign/portal/). All four functions are
// forwarded: none has queue outputs (OTP codes are sent directly through d.Senders).
func init() {
	areas = append(areas, area{
		name: "otp",
		routes: func(mux *http.ServeMux, d *Deps) error {
			(&portal.Challenge{
				API: &portal.API{Store: d.Sessions, Blobs: d.Blobs, Tokens: d.Tokens, Lapsed: portal.LapsedCodec(d.Config.Tokens),
					PortalOrigin: d.Config.PortalOrigin, Now: time.Now},
				Senders: d.Senders, Hasher: d.Config.EmailHasher, Cipher: d.Config.PIICipher, PortalURL: d.Config.PortalURL,
			}).Routes(mux)
			return nil
		},
	})
}
