package app

import (
	"github.com/esign-svc/esign/processor/portalpurge"
	"github.com/esign-svc/esign/shared/portalclient"
)

// portalPurge builds the portal purge job: with a portal client when PORTAL_API_URL is set,
// else without one (the job then records that the purge was skipped). Errors: the client's
// configuration errors (Load has already checked the same settings).
func portalPurge(d *Deps) (*portalpurge.Job, error) {
	deps := portalpurge.Deps{Sessions: d.Sessions, Now: d.Now}
	if d.Config.PortalAPIURL != "" {
		c, err := portalclient.New(d.Config.PortalAPIURL, d.Config.PortalSecret)
		if err != nil {
			return nil, err
		}
		deps.Portal = c
	}
	return portalpurge.New(deps)
}
