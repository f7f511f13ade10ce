package e2e

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
)

// graphFake is a local https stand-in for Entra ID's token endpoint and the Graph endpoints the
// upload uses (get site by path, list drives, simple upload). It checks each request's
// documented shape (token form, bearer token, paths, Content-Length) and records what it got;
// the processor trusts it through GRAPH_CA_FILE. Site "/sites/Legal" accepts uploads, site
// "/sites/Locked" answers 403 accessDenied on upload (no admin consent).
type graphFake struct {
	srv *httptest.Server

	mu       sync.Mutex
	problems []string          // requests that broke the documented shape
	files    map[string][]byte // "<driveId>|<item path>" -> bytes
	tokens   int
}

const (
	graphTenant   = "33333333-3333-4333-8333-333333333333"
	graphClientID = "e2e-graph-client"
	graphSecret   = "e2e-graph-secret~value"
	graphBearer   = "e2e-graph-access-token"
)

var graphStub *graphFake

// init starts the fake before TestMain starts the host, and points the apps at it.
func init() {
	graphStub = &graphFake{files: map[string][]byte{}}
	graphStub.srv = httptest.NewTLSServer(http.HandlerFunc(graphStub.serve))
	f, err := os.CreateTemp("", "graph-ca-*.pem")
	if err != nil {
		panic(err)
	}
	if err := pem.Encode(f, &pem.Block{Type: "CERTIFICATE", Bytes: graphStub.srv.Certificate().Raw}); err != nil {
		panic(err)
	}
	_ = f.Close()
	extraSettings["GRAPH_TENANT_ID"] = graphTenant
	extraSettings["GRAPH_CLIENT_ID"] = graphClientID
	extraSettings["GRAPH_CLIENT_SECRET"] = graphSecret
	extraSettings["GRAPH_AUTHORITY_HOST"] = graphStub.srv.URL
	extraSettings["GRAPH_BASE_URL"] = graphStub.srv.URL + "/v1.0"
	extraSettings["GRAPH_CA_FILE"] = f.Name()
	remember("Graph client secret", graphSecret)
	remember("Graph access token", graphBearer)
}

func (g *graphFake) problem(format string, args ...any) {
	g.problems = append(g.problems, fmt.Sprintf(format, args...))
}

// Problems returns the shape violations seen so far.
func (g *graphFake) Problems() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.problems...)
}

// file returns what was uploaded at driveID|itemPath.
func (g *graphFake) file(key string) ([]byte, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, ok := g.files[key]
	return b, ok
}

func graphJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (g *graphFake) serve(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	raw := r.URL.EscapedPath()
	if r.Method == http.MethodPost && raw == "/"+graphTenant+"/oauth2/v2.0/token" {
		g.token(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+graphBearer {
		g.problem("%s %s without the issued bearer token", r.Method, raw)
		graphJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]string{"code": "InvalidAuthenticationToken"}})
		return
	}
	sites := map[string]string{"/v1.0/sites/contoso.sharepoint.com:/sites/Legal": "site-legal",
		"/v1.0/sites/contoso.sharepoint.com:/sites/Locked": "site-locked"}
	switch {
	case r.Method == http.MethodGet && sites[raw] != "":
		graphJSON(w, http.StatusOK, map[string]string{"id": sites[raw], "webUrl": "https://contoso.sharepoint.com" + strings.TrimPrefix(raw, "/v1.0/sites/contoso.sharepoint.com:")})
	case r.Method == http.MethodGet && (raw == "/v1.0/sites/site-legal/drives" || raw == "/v1.0/sites/site-locked/drives"):
		site := strings.TrimSuffix(strings.TrimPrefix(raw, "/v1.0/sites/"), "/drives")
		graphJSON(w, http.StatusOK, map[string]any{"value": []map[string]string{
			{"id": "drive-assets", "name": "Site Assets", "webUrl": "https://contoso.sharepoint.com/sites/x/SiteAssets", "driveType": "documentLibrary"},
			{"id": "drive-" + site, "name": "Documents", "webUrl": "https://contoso.sharepoint.com/sites/x/Shared%20Documents", "driveType": "documentLibrary"},
		}})
	case r.Method == http.MethodPut && strings.HasPrefix(raw, "/v1.0/drives/") && strings.HasSuffix(raw, ":/content"):
		g.content(w, r, raw)
	default:
		g.problem("unexpected request %s %s", r.Method, raw)
		graphJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"code": "itemNotFound"}})
	}
}

// token checks the client-credentials form of Entra ID's v2.0 token endpoint.
func (g *graphFake) token(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		g.problem("token request Content-Type %q", ct)
	}
	if err := r.ParseForm(); err != nil {
		g.problem("token form: %v", err)
	}
	want := url.Values{"grant_type": {"client_credentials"}, "client_id": {graphClientID},
		"client_secret": {graphSecret}, "scope": {"https://graph.microsoft.com/.default"}}
	for k, v := range want {
		if r.PostForm.Get(k) != v[0] {
			g.problem("token form %s is not as documented", k)
		}
	}
	g.tokens++
	graphJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "access_token": graphBearer, "expires_in": 3600})
}

// content is PUT /drives/{id}/root:/{path}:/content (simple upload).
func (g *graphFake) content(w http.ResponseWriter, r *http.Request, raw string) {
	if q := r.URL.RawQuery; q != "@microsoft.graph.conflictBehavior=rename" {
		g.problem("upload query %q", q)
	}
	rest := strings.TrimSuffix(strings.TrimPrefix(raw, "/v1.0/drives/"), ":/content")
	drive, itemPath, ok := strings.Cut(rest, "/root:/")
	if !ok {
		g.problem("upload path %q lacks /root:/", raw)
	}
	itemPath, _ = url.PathUnescape(itemPath)
	body, _ := io.ReadAll(r.Body)
	if int64(len(body)) != r.ContentLength {
		g.problem("Content-Length %d but %d bytes", r.ContentLength, len(body))
	}
	if drive == "drive-site-locked" {
		graphJSON(w, http.StatusForbidden, map[string]any{"error": map[string]string{"code": "accessDenied", "message": "Access denied"}})
		return
	}
	g.files[drive+"|"+itemPath] = body
	name := itemPath[strings.LastIndex(itemPath, "/")+1:]
	graphJSON(w, http.StatusCreated, map[string]any{"id": fmt.Sprintf("item-%d", len(g.files)), "name": name, "size": len(body),
		"webUrl":          "https://contoso.sharepoint.com/sites/Legal/Shared%20Documents/" + url.PathEscape(itemPath),
		"parentReference": map[string]string{"driveId": drive}})
}
