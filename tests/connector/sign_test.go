package connector

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/esign-svc/esign/devtools/devkeys"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/esign"
)

// portalPost is one call of the signing portal's API (the portal is another package's work:
// these few calls stand in for a signer's browser, as tests/e2e's seal helpers do).
func portalPost(t *testing.T, path, token string, body any, header map[string]string) map[string]any {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		raw, _ = json.Marshal(b)
	}
	req, _ := http.NewRequest(http.MethodPost, svc.URL(path), bytes.NewReader(raw))
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// signSlot takes one slot through the portal (activate, viewed, consent) and posts the signed
// callback, as the signing portal does.
func signSlot(t *testing.T, portalURL, sessionID, name string) {
	t.Helper()
	u, err := url.Parse(portalURL)
	if err != nil {
		t.Fatal(err)
	}
	act := portalPost(t, "esign/portal/activate", "", map[string]any{"token": u.Query().Get("token")}, nil)
	var fields []map[string]any
	list, _ := act["fields"].([]any)
	for _, f := range list {
		m := f.(map[string]any)
		switch m["kind"] {
		case "initials":
			fields = append(fields, map[string]any{"name": m["name"], "value": "AB"})
		case "date":
			fields = append(fields, map[string]any{"name": m["name"], "value": time.Now().UTC().Format("2006-01-02")})
		case "text":
			fields = append(fields, map[string]any{"name": m["name"], "value": "Signed through svcconnect"})
		case "checkbox":
			fields = append(fields, map[string]any{"name": m["name"], "checked": true})
		}
	}
	v := portalPost(t, "esign/portal/viewed", act["accessToken"].(string), nil, nil)
	var ids []string
	for _, st := range esign.ConsentStatements {
		ids = append(ids, st.ID)
	}
	c := portalPost(t, "esign/portal/consent", v["accessToken"].(string), map[string]any{"statements": ids, "version": esign.ConsentVersion}, nil)
	png, err := os.ReadFile(filepath.Join("..", "e2e", "testdata", "signature.png"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{
		"callbackId": uuid.NewString(), "sessionId": sessionID, "accessToken": c["accessToken"],
		"signerName": name, "signaturePng": base64.StdEncoding.EncodeToString(png), "fields": fields,
		"consents": c["consentsAccepted"], "ip": "203.0.113.7", "userAgent": "Mozilla/5.0 (svcconnect test)",
	})
	secret := strings.Split(svc.Settings["PORTAL_CALLBACK_SECRETS"], ",")[0]
	portalPost(t, "esign/callback", "", body, map[string]string{callbacksig.Header: callbacksig.Sign(secret, time.Now(), body)})
}

// TestSignLocalPDF: `svcconnect sign` uploads a local PDF and creates a session for two signers;
// both sign through the portal's API; `svcconnect status --wait complete` follows the session to
// its sealed PDF; the upload is in the upload log.
func TestSignLocalPDF(t *testing.T) {
	t.Parallel()
	set := connSettings(t, nil)
	pdf := filepath.Join("..", "e2e", "testdata", "template-3p.pdf")
	corr := "svcconnect-sign-" + uuid.NewString()
	out := ok(t, set, "sign", pdf, "--signer", "buyer:buyer-"+uuid.NewString()[:8]+"@example.test:Ann Buyer",
		"--signer", "seller:seller-"+uuid.NewString()[:8]+"@example.test", "--correlation-id", corr, "--output", "json")
	var created struct {
		Upload struct {
			PDFBlobPath string `json:"pdfBlobPath"`
			PDFHash     string `json:"pdfHash"`
			Pages       int    `json:"pages"`
		} `json:"upload"`
		Session struct {
			GroupID, CorrelationID, State string
			Slots                         []struct {
				SlotIndex            int
				SessionID, PortalURL string
			}
		} `json:"session"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.HasPrefix(created.Upload.PDFBlobPath, "documents/"+devkeys.DevTenantID+"/uploads/") || created.Upload.Pages != 3 ||
		created.Session.CorrelationID != corr || created.Session.State != "pending" || len(created.Session.Slots) != 2 {
		t.Fatalf("sign answered %s", out)
	}
	text := ok(t, set, "status", corr)
	if !strings.Contains(text, "state:         pending") || !strings.Contains(text, "slot 0 buyer") {
		t.Fatalf("status before signing:\n%s", text)
	}
	for i, sl := range created.Session.Slots {
		signSlot(t, sl.PortalURL, sl.SessionID, fmt.Sprintf("Signer %d", i))
	}
	out = ok(t, set, "status", corr, "--wait", "complete", "--timeout", "3m", "--output", "json")
	var st struct {
		State, SignedDocumentPath, CertificatePath string
		Slots                                      []struct{ State string }
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.State != "complete" || st.SignedDocumentPath == "" || st.CertificatePath == "" || st.Slots[0].State != "signed" || st.Slots[1].State != "signed" {
		t.Fatalf("status after signing: %s", out)
	}
	log := ok(t, set, "jobs", "uploads", "--output", "json")
	if !strings.Contains(log, created.Upload.PDFBlobPath) || !strings.Contains(log, `"file": "template-3p.pdf"`) {
		t.Fatalf("upload log: %s", log)
	}
	// A status of a session that does not exist is the service's 404 problem, exit status 1.
	r := svcconnect(t, set, "", false, "status", "no-such-"+uuid.NewString())
	if r.code != 1 || !strings.Contains(r.stderr, "404 session_not_found") {
		t.Fatalf("unknown session: %d %s", r.code, r.stderr)
	}
}
