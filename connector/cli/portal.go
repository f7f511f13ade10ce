package cli

import (
	"net/url"
	"strings"
)

// portalLink is the link to a page of the signing portal at SERVICE_PORTAL_URL: the page's path
// (elems, each escaped, e.g. "workflow", <id>) under the URL's own path, with the token that the
// service's own link (serviceLink, from its answer) carries in param, added to any query the URL
// has. It is "" when SERVICE_PORTAL_URL is not set or the service's link has no such token: the
// connector makes a link only to a page the reference portal serves (/sign?token=,
// /deliver/{id}?t=, /workflow/{id}?pt=), never one of its own.
func (a *app) portalLink(serviceLink, param string, elems ...string) string {
	if a.set == nil || a.set.PortalURL == "" {
		return ""
	}
	sl, err := url.Parse(serviceLink)
	if err != nil || sl.Query().Get(param) == "" {
		return ""
	}
	u, err := url.Parse(a.set.PortalURL)
	if err != nil {
		return ""
	}
	raw := strings.TrimRight(u.EscapedPath(), "/")
	for _, e := range elems {
		u.Path = strings.TrimRight(u.Path, "/") + "/" + e
		raw += "/" + url.PathEscape(e)
	}
	u.RawPath = raw
	q := u.Query()
	q.Set(param, sl.Query().Get(param))
	u.RawQuery = q.Encode()
	return u.String()
}
