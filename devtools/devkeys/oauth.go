package devkeys

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"
)

// The dev OAuth client of the connector (svcconnect): Setup writes its settings into dev.env.
const (
	DevClientID         = "svcconnect-dev"
	DevApproverClientID = "svcconnect-approver"
	DefaultOAuthURL     = "http://127.0.0.1:7072"
	FileClientSecret    = "oauth-client-secret"
)

// OAuthClient is a client the dev token endpoint knows: its secret and the app roles its tokens
// carry.
type OAuthClient struct {
	Secret string
	Roles  []string
}

// OAuthServer is the dev identity provider's token endpoint for the OAuth 2.0
// client-credentials grant, shaped like Entra ID's: POST /{tenant}/oauth2/v2.0/token with a form
// of grant_type=client_credentials, client_id, client_secret and scope (`<audience>/.default`).
// It answers {access_token, token_type: Bearer, expires_in} with a token minted by the dev IdP
// key (so the service accepts it), or an OAuth error (400 invalid_request,
// unsupported_grant_type, invalid_scope; 401 invalid_client). The secret is compared in constant
// time. Nothing here is for production.
type OAuthServer struct {
	IdP      *IdP
	Issuer   string
	Audience string
	Tenant   string // the only tenant served (its path segment and the tokens' tid)
	Clients  map[string]OAuthClient
	TTL      time.Duration // default 1 h
	// Issued counts the tokens minted (tests see the connector's caching and refresh).
	Issued func()
}

func (s *OAuthServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/"+s.Tenant+"/oauth2/v2.0/token" {
		oauthError(w, http.StatusNotFound, "invalid_request", "no such tenant or endpoint")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "POST only")
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the form does not parse")
		return
	}
	if r.PostForm.Get("grant_type") != "client_credentials" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "only client_credentials")
		return
	}
	id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok && id == "" {
		id, secret = u, p
	}
	c, known := s.Clients[id]
	// Compare hashes so that the time taken says nothing of the secret's length either.
	want, got := sha256.Sum256([]byte(c.Secret)), sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(want[:], got[:]) != 1 || !known || secret == "" {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	if r.PostForm.Get("scope") != s.Audience+"/.default" {
		oauthError(w, http.StatusBadRequest, "invalid_scope", fmt.Sprintf("the scope must be %s/.default", s.Audience))
		return
	}
	ttl := s.TTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	tok, err := s.IdP.Mint(TokenOptions{Issuer: s.Issuer, Audience: s.Audience, Tenant: s.Tenant, Roles: c.Roles,
		NoRoles: len(c.Roles) == 0, TTL: ttl, Subject: id, ObjectID: clientObjectID(s.Tenant, id), Name: id})
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error", "minting failed")
		return
	}
	if s.Issued != nil {
		s.Issued()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer",
		"expires_in": int(ttl / time.Second)})
}

// clientObjectID is a stable UUID-shaped oid of a client (the service principal's object id).
func clientObjectID(tenant, client string) string {
	h := sha256.Sum256([]byte(tenant + "\x00" + client))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

// DevOAuthClients are the dev clients of `make run`: the connector's (initiator, operator,
// workflow approver) and an approver of batches (a batch's submitter cannot decide it).
func DevOAuthClients(secret string) map[string]OAuthClient {
	return map[string]OAuthClient{
		DevClientID:         {Secret: secret, Roles: []string{"Esign.Initiator", "Service.Admin", "Workflow.Approver"}},
		DevApproverClientID: {Secret: secret, Roles: []string{"Dispatch.Approver"}},
	}
}

// NewDevOAuthServer is the token endpoint over the keys and dev.env under dir (Setup's).
// Errors: dev.env, the IdP key or the client secret missing (run devsetup first).
func NewDevOAuthServer(dir string) (*OAuthServer, error) {
	env, err := ReadEnv(strings.TrimRight(dir, "/") + "/" + FileDevEnv)
	if err != nil {
		return nil, fmt.Errorf("%w (run devtools/cmd/devsetup first)", err)
	}
	idp, err := LoadIdP(env["DEV_IDP_KEY_FILE"])
	if err != nil {
		return nil, err
	}
	secret := env["SERVICE_DISPATCHER_CLIENT_SECRET"]
	if secret == "" {
		return nil, fmt.Errorf("dev.env has no SERVICE_DISPATCHER_CLIENT_SECRET (run devtools/cmd/devsetup again)")
	}
	return &OAuthServer{IdP: idp, Issuer: env["AUTH_ISSUER"], Audience: env["AUTH_AUDIENCE"], Tenant: env["DEV_TENANT_ID"],
		Clients: DevOAuthClients(secret)}, nil
}
