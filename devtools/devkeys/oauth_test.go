package devkeys

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestOAuthServer: the dev token endpoint mints a token of the dev IdP for a known client with
// its secret and the audience's .default scope, and refuses every other request with the OAuth
// error a client switches on.
func TestOAuthServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := Setup(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	srv, err := NewDevOAuthServer(dir)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	env, _ := ReadEnv(dir + "/" + FileDevEnv)
	secret := env["SERVICE_DISPATCHER_CLIENT_SECRET"]
	good := url.Values{"grant_type": {"client_credentials"}, "client_id": {DevClientID},
		"client_secret": {secret}, "scope": {DevAudience + "/.default"}}
	with := func(k, v string) url.Values {
		f := url.Values{}
		for kk, vv := range good {
			f[kk] = vv
		}
		f.Set(k, v)
		return f
	}
	tokenURL := ts.URL + "/" + DevTenantID + "/oauth2/v2.0/token"
	for _, tc := range []struct {
		name   string
		url    string
		form   url.Values
		status int
		code   string
	}{
		{"good", tokenURL, good, 200, ""},
		{"wrong secret", tokenURL, with("client_secret", secret+"x"), 401, "invalid_client"},
		{"empty secret", tokenURL, with("client_secret", ""), 401, "invalid_client"},
		{"unknown client", tokenURL, with("client_id", "nobody"), 401, "invalid_client"},
		{"other grant", tokenURL, with("grant_type", "password"), 400, "unsupported_grant_type"},
		{"wrong scope", tokenURL, with("scope", "api://other/.default"), 400, "invalid_scope"},
		{"other tenant", ts.URL + "/00000000-0000-4000-8000-000000000000/oauth2/v2.0/token", good, 404, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.PostForm(tc.url, tc.form)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || (tc.code != "" && body["error"] != tc.code) {
				t.Fatalf("%d %v, want %d %s", resp.StatusCode, body, tc.status, tc.code)
			}
			if tc.status != 200 {
				return
			}
			if body["token_type"] != "Bearer" || body["expires_in"] != float64(3600) {
				t.Fatalf("answer %v", body)
			}
			parts := strings.Split(body["access_token"].(string), ".")
			raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
			var claims struct {
				Iss, Aud, Tid, Sub string
				Roles              []string
			}
			if err := json.Unmarshal(raw, &claims); err != nil {
				t.Fatal(err)
			}
			if claims.Iss != DevIssuer || claims.Aud != DevAudience || claims.Tid != DevTenantID || claims.Sub != DevClientID ||
				!slices.Contains(claims.Roles, "Esign.Initiator") {
				t.Fatalf("claims %+v", claims)
			}
		})
	}
	if resp, err := http.Post(tokenURL, "application/json", strings.NewReader(`{}`)); err != nil || resp.StatusCode != 400 {
		t.Fatalf("a JSON body: %v %v", resp.StatusCode, err)
	}
}
