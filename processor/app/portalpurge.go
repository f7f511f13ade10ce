package app

import (
	"github.com/esign-svc/esign/processor/portalpurge"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/portalclient"
)

// portalPurgeDeps are the portal purge job's: with a portal client when PORTAL_API_URL is
// set, else without one (the job then records that the purge was skipped). Errors: the
// client's configuration errors (Load has already checked the same settings).
func portalPurgeDeps(d *Deps, jobs *esign.SessionJobs) (portalpurge.Deps, error) {
	deps := portalpurge.Deps{Sessions: jobs, Now: d.Now}
	if d.Config.PortalAPIURL != "" {
		c, err := portalclient.New(d.Config.PortalAPIURL, d.Config.PortalSecret)
		if err != nil {
			return deps, err
		}
		deps.Portal = c
	}
	return deps, nil
}
