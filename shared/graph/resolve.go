package graph

import (
	"context"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
)

// maxDrivePages bounds paging through a site's drives (Graph pages of 200 by default).
const maxDrivePages = 20

type siteResource struct {
	ID     string `json:"id"`
	WebURL string `json:"webUrl"`
}

type driveResource struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	WebURL    string `json:"webUrl"`
	DriveType string `json:"driveType"`
}

type driveList struct {
	Value    []driveResource `json:"value"`
	NextLink string          `json:"@odata.nextLink"`
}

// graphURL joins pre-escaped path text to the Graph base.
func (cl *Client) graphURL(escapedPath string) string {
	return strings.TrimRight(cl.graphBase.String(), "/") + "/" + strings.TrimLeft(escapedPath, "/")
}

// resolveSite: GET /sites/{hostname}:/{server-relative-path}, or GET /sites/{hostname} for
// the host's root site.
func (cl *Client) resolveSite(ctx context.Context, s site) (siteResource, error) {
	p := "sites/" + escapeSegment(s.host)
	if len(s.segments) > 0 {
		p += ":/" + escapePath(s.segments)
	}
	resp, err := cl.do(ctx, call{method: http.MethodGet, url: cl.graphURL(p), auth: true,
		stage: stageSite, okCodes: []int{http.StatusOK}, header: jsonAccept()})
	if err != nil {
		return siteResource{}, err
	}
	var sr siteResource
	if err := decodeJSON(resp, &sr); err != nil {
		return siteResource{}, err
	}
	if sr.ID == "" {
		return siteResource{}, apperr.New(apperr.KindInternal, "graph_bad_response", "Microsoft Graph returned a site without an id")
	}
	return sr, nil
}

// resolveDrive: GET /sites/{site-id}/drives (following @odata.nextLink on the Graph host) and
// pick the library. Matching is case-insensitive, first on the drive's name (the library's
// display name, "Documents"), then on the last segment of its webUrl (the URL name, "Shared
// Documents"), then on the whole server-relative path when libraryPath has a "/".
func (cl *Client) resolveDrive(ctx context.Context, siteID, library string) (driveResource, error) {
	next := cl.graphURL("sites/" + escapeID(siteID) + "/drives")
	var all []driveResource
	for page := 0; next != "" && page < maxDrivePages; page++ {
		if !cl.sameGraphHost(next) {
			return driveResource{}, apperr.New(apperr.KindInternal, "graph_bad_response", "Microsoft Graph paged to another host")
		}
		resp, err := cl.do(ctx, call{method: http.MethodGet, url: next, auth: true,
			stage: stageDrives, okCodes: []int{http.StatusOK}, header: jsonAccept()})
		if err != nil {
			return driveResource{}, err
		}
		var dl driveList
		if err := decodeJSON(resp, &dl); err != nil {
			return driveResource{}, err
		}
		all = append(all, dl.Value...)
		next = dl.NextLink
	}
	if d, ok := matchDrive(all, library); ok {
		return d, nil
	}
	return driveResource{}, apperr.Invalid("sharepoint_target_not_found",
		apperr.Field(FieldLibraryPath, "no document library with this name on the site"))
}

func matchDrive(drives []driveResource, library string) (driveResource, bool) {
	for _, d := range drives {
		if d.ID != "" && strings.EqualFold(d.Name, library) {
			return d, true
		}
	}
	for _, d := range drives {
		if d.ID == "" {
			continue
		}
		u, err := url.Parse(d.WebURL)
		if err != nil {
			continue
		}
		if strings.EqualFold(path.Base(u.Path), library) ||
			strings.Contains(library, "/") && strings.EqualFold(strings.Trim(u.Path, "/"), library) {
			return d, true
		}
	}
	return driveResource{}, false
}

func (cl *Client) sameGraphHost(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Scheme == "https" && strings.EqualFold(u.Host, cl.graphBase.Host)
}

func jsonAccept() http.Header { return http.Header{"Accept": {"application/json"}} }
