package graph

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeGraph is an httptest TLS server implementing the documented Entra ID token endpoint and
// the Graph endpoints the client uses. It checks every request's shape and records what it
// received so tests can compare.
type fakeGraph struct {
	t   *testing.T
	srv *httptest.Server

	tenant, clientID, secret string
	expiresIn                int

	mu            sync.Mutex
	tokenRequests int
	valid         map[string]bool   // bearer tokens the server accepts
	sites         map[string]string // escaped "host:/path" -> site id
	drives        map[string][]driveResource
	pageSize      int
	uploadPaths   []string          // raw (escaped) request paths of uploads
	files         map[string][]byte // driveID + "|" + decoded item path -> content
	sessions      map[string]*fakeSession
	ranges        []fakeRange
	deleted       []string
	inject        map[string][]injected // route kind -> queued failures
	calls         map[string]int        // route kind -> count
}

type fakeSession struct {
	key       string
	name      string
	received  []byte
	total     int64
	completed bool
}

type fakeRange struct {
	start, end, total int64
	length            int
	hadAuth           bool
}

type injected struct {
	status     int
	retryAfter string
	code       string
}

func newFakeGraph(t *testing.T) *fakeGraph {
	t.Helper()
	f := &fakeGraph{
		t: t, tenant: "11111111-2222-3333-4444-555555555555", clientID: "app-client-id",
		secret: "s3cret-value~", expiresIn: 3600,
		valid: map[string]bool{}, sites: map[string]string{}, drives: map[string][]driveResource{},
		files: map[string][]byte{}, sessions: map[string]*fakeSession{}, inject: map[string][]injected{},
		calls: map[string]int{}, pageSize: 1,
	}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	siteID := "contoso.sharepoint.com,aaaa-1,bbbb-2"
	f.sites["contoso.sharepoint.com:/sites/Legal"] = siteID
	f.drives[siteID] = []driveResource{
		{ID: "b!other", Name: "Site Assets", WebURL: "https://contoso.sharepoint.com/sites/Legal/SiteAssets", DriveType: "documentLibrary"},
		{ID: "b!docs-1", Name: "Documents", WebURL: "https://contoso.sharepoint.com/sites/Legal/Shared%20Documents", DriveType: "documentLibrary"},
	}
	return f
}

func (f *fakeGraph) config() Config {
	return Config{
		TenantID: f.tenant, ClientID: f.clientID, ClientSecret: f.secret,
		AuthorityHost: f.srv.URL, GraphBase: f.srv.URL + "/v1.0", HTTPClient: f.srv.Client(),
		ChunkSize: 3 * ChunkUnit,
	}
}

func (f *fakeGraph) failNext(kind string, inj ...injected) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inject[kind] = append(f.inject[kind], inj...)
}

func (f *fakeGraph) count(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[kind]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func graphErr(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": "fake"}})
}

func (f *fakeGraph) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	raw := r.URL.EscapedPath()
	kind := routeKind(r.Method, raw)
	f.calls[kind]++
	if q := f.inject[kind]; len(q) > 0 {
		f.inject[kind] = q[1:]
		if q[0].retryAfter != "" {
			w.Header().Set("Retry-After", q[0].retryAfter)
		}
		w.Header().Set("request-id", "5c1a2b3c-0000-4000-8000-000000000001")
		graphErr(w, q[0].status, q[0].code)
		return
	}
	switch kind {
	case "token":
		f.serveToken(w, r)
		return
	case "range", "cancel":
		if r.Header.Get("Authorization") != "" {
			f.t.Errorf("%s %s carried an Authorization header; upload URLs must not get the token", r.Method, raw)
		}
		f.serveRange(w, r, kind)
		return
	case "unknown":
		f.t.Errorf("unexpected request %s %s", r.Method, r.URL.RequestURI())
		http.NotFound(w, r)
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !f.valid[tok] {
		f.t.Errorf("%s %s: bearer token missing or not one the token endpoint issued", r.Method, raw)
		graphErr(w, http.StatusUnauthorized, "InvalidAuthenticationToken")
		return
	}
	switch kind {
	case "site":
		id, ok := f.sites[strings.TrimPrefix(raw, "/v1.0/sites/")]
		if !ok {
			graphErr(w, http.StatusNotFound, "itemNotFound")
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"id": id, "webUrl": "https://contoso.sharepoint.com/sites/Legal"})
	case "drives":
		siteID, _ := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(raw, "/v1.0/sites/"), "/drives"))
		all, ok := f.drives[siteID]
		if !ok {
			graphErr(w, http.StatusNotFound, "itemNotFound")
			return
		}
		skip, _ := strconv.Atoi(r.URL.Query().Get("$skiptoken"))
		end := min(skip+f.pageSize, len(all))
		body := map[string]any{"value": all[skip:end]}
		if end < len(all) {
			body["@odata.nextLink"] = fmt.Sprintf("%s%s?$skiptoken=%d", f.srv.URL, raw, end)
		}
		writeJSON(w, http.StatusOK, body)
	case "content":
		if got := r.URL.RawQuery; got != "@microsoft.graph.conflictBehavior=rename" {
			f.t.Errorf("simple upload query = %q, want @microsoft.graph.conflictBehavior=rename", got)
		}
		driveID, itemPath := f.splitItem(raw, ":/content")
		body, _ := io.ReadAll(r.Body)
		if int64(len(body)) != r.ContentLength {
			f.t.Errorf("Content-Length %d but %d bytes received", r.ContentLength, len(body))
		}
		f.uploadPaths = append(f.uploadPaths, raw)
		f.files[driveID+"|"+itemPath] = body
		writeJSON(w, http.StatusCreated, f.item(driveID, itemPath, int64(len(body))))
	case "session":
		driveID, itemPath := f.splitItem(raw, ":/createUploadSession")
		var req struct {
			Item map[string]any `json:"item"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			f.t.Errorf("createUploadSession body: %v", err)
		}
		if req.Item["@microsoft.graph.conflictBehavior"] != "rename" {
			f.t.Errorf("createUploadSession item = %v, want conflictBehavior rename", req.Item)
		}
		name := itemPath[strings.LastIndex(itemPath, "/")+1:]
		if req.Item["name"] != name {
			f.t.Errorf("createUploadSession item name %v, path names %q", req.Item["name"], name)
		}
		f.uploadPaths = append(f.uploadPaths, raw)
		id := fmt.Sprintf("sess%d", len(f.sessions)+1)
		f.sessions[id] = &fakeSession{key: driveID + "|" + itemPath, total: -1}
		writeJSON(w, http.StatusOK, map[string]string{
			"uploadUrl":          f.srv.URL + "/upload/" + id + "?guid=abc&tempauth=secretish",
			"expirationDateTime": "2030-01-01T00:00:00Z",
		})
	}
}

func routeKind(method, raw string) string {
	switch {
	case method == http.MethodPost && strings.HasSuffix(raw, "/oauth2/v2.0/token"):
		return "token"
	case method == http.MethodPut && strings.HasPrefix(raw, "/upload/"):
		return "range"
	case method == http.MethodDelete && strings.HasPrefix(raw, "/upload/"):
		return "cancel"
	case method == http.MethodGet && strings.HasPrefix(raw, "/v1.0/sites/") && strings.HasSuffix(raw, "/drives"):
		return "drives"
	case method == http.MethodGet && strings.HasPrefix(raw, "/v1.0/sites/"):
		return "site"
	case method == http.MethodPut && strings.HasPrefix(raw, "/v1.0/drives/") && strings.HasSuffix(raw, ":/content"):
		return "content"
	case method == http.MethodPost && strings.HasPrefix(raw, "/v1.0/drives/") && strings.HasSuffix(raw, ":/createUploadSession"):
		return "session"
	}
	return "unknown"
}

func (f *fakeGraph) splitItem(raw, suffix string) (driveID, itemPath string) {
	rest := strings.TrimSuffix(strings.TrimPrefix(raw, "/v1.0/drives/"), suffix)
	d, p, ok := strings.Cut(rest, "/root:/")
	if !ok {
		f.t.Errorf("item path %q lacks /root:/", raw)
	}
	driveID, _ = url.PathUnescape(d)
	itemPath, err := url.PathUnescape(p)
	if err != nil {
		f.t.Errorf("item path %q: %v", raw, err)
	}
	return driveID, itemPath
}

func (f *fakeGraph) item(driveID, itemPath string, size int64) map[string]any {
	name := itemPath[strings.LastIndex(itemPath, "/")+1:]
	return map[string]any{
		"id": "item-" + strconv.Itoa(len(f.files)), "name": name, "size": size,
		"webUrl":          "https://contoso.sharepoint.com/sites/Legal/Shared%20Documents/" + url.PathEscape(itemPath),
		"parentReference": map[string]string{"driveId": driveID},
	}
}

func (f *fakeGraph) serveToken(w http.ResponseWriter, r *http.Request) {
	f.tokenRequests++
	if want := "/" + f.tenant + "/oauth2/v2.0/token"; r.URL.Path != want {
		f.t.Errorf("token path %q, want %q", r.URL.Path, want)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		f.t.Errorf("token Content-Type %q", ct)
	}
	if err := r.ParseForm(); err != nil {
		f.t.Errorf("token form: %v", err)
	}
	want := map[string]string{"client_id": f.clientID, "client_secret": f.secret,
		"scope": "https://graph.microsoft.com/.default", "grant_type": "client_credentials"}
	for k, v := range want {
		if got := r.PostForm.Get(k); got != v {
			f.t.Errorf("token form %s = %q, want %q", k, got, v)
		}
	}
	if len(r.PostForm) != len(want) {
		f.t.Errorf("token form has %d fields, want %d: %v", len(r.PostForm), len(want), keys(r.PostForm))
	}
	if r.PostForm.Get("client_secret") != f.secret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "AADSTS7000215"})
		return
	}
	tok := fmt.Sprintf("access-token-%d", f.tokenRequests)
	f.valid[tok] = true
	writeJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "expires_in": f.expiresIn, "access_token": tok})
}

func keys(v url.Values) []string {
	var out []string
	for k := range v {
		out = append(out, k)
	}
	return out
}

func (f *fakeGraph) serveRange(w http.ResponseWriter, r *http.Request, kind string) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	s, ok := f.sessions[id]
	if !ok {
		graphErr(w, http.StatusNotFound, "itemNotFound")
		return
	}
	if kind == "cancel" {
		f.deleted = append(f.deleted, id)
		delete(f.sessions, id)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var start, end, total int64
	if _, err := fmt.Sscanf(r.Header.Get("Content-Range"), "bytes %d-%d/%d", &start, &end, &total); err != nil {
		f.t.Errorf("Content-Range %q: %v", r.Header.Get("Content-Range"), err)
		graphErr(w, http.StatusBadRequest, "invalidRange")
		return
	}
	f.ranges = append(f.ranges, fakeRange{start: start, end: end, total: total, length: len(body), hadAuth: r.Header.Get("Authorization") != ""})
	if s.total == -1 {
		s.total = total
	}
	switch {
	case total != s.total:
		f.t.Errorf("range total %d differs from the session's %d", total, s.total)
	case start != int64(len(s.received)):
		f.t.Errorf("range starts at %d, expected %d (ranges must be contiguous)", start, len(s.received))
	case end-start+1 != int64(len(body)) || int64(len(body)) != r.ContentLength:
		f.t.Errorf("range %d-%d carries %d bytes (Content-Length %d)", start, end, len(body), r.ContentLength)
	case end+1 < total && len(body)%ChunkUnit != 0:
		f.t.Errorf("non-final range of %d bytes is not a multiple of 320 KiB", len(body))
	}
	s.received = append(s.received, body...)
	if int64(len(s.received)) < total {
		writeJSON(w, http.StatusAccepted, map[string]any{"expirationDateTime": "2030-01-01T00:00:00Z",
			"nextExpectedRanges": []string{fmt.Sprintf("%d-", len(s.received))}})
		return
	}
	s.completed = true
	f.files[s.key] = s.received
	driveID, itemPath, _ := strings.Cut(s.key, "|")
	writeJSON(w, http.StatusCreated, f.item(driveID, itemPath, int64(len(s.received))))
}
