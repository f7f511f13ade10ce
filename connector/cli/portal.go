package cli

import (
	"net/url"
	"strings"
)

// portalLink is the link to a page of the signing portal at SERVICE_PORTAL_URL: page (the
// portal's path, e.g. /workflow/<id>) with the token that the service's own link (serviceLink,
// from its answer) carries in param. It is "" when SERVICE_PORTAL_URL is not set or the
// service's link has no such token: the connector makes a link only to a page the reference
// portal serves (/sign?token=, /deliver/{id}?t=, /workflow/{id}?pt=), never one of its own.
func (a *app) portalLink(page, serviceLink, param string) string {
	if a.set == nil || a.set.PortalURL == "" {
		return ""
	}
	u, err := url.Parse(serviceLink)
	if err != nil {
		return ""
	}
	tok := u.Query().Get(param)
	if tok == "" {
		return ""
	}
	return strings.TrimRight(a.set.PortalURL, "/") + page + "?" + url.Values{param: {tok}}.Encode()
}
