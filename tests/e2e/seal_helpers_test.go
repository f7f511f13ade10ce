package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify/outbox"
)

// sealSigner is what the test told the service about one signer, to find it in the certificate.
type sealSigner struct {
	Index     int
	Email     string
	Name      string
	IP        string
	UserAgent string
	SessionID string
	Consents  []map[string]any // id, version, acceptedAt as the portal recorded them
}

// sealWalkSigner takes one slot through activate, viewed, consent and the signed callback, as
// the portal would. portalURL is the slot's link from the create answer.
func sealWalkSigner(t *testing.T, sg *sealSigner, portalURL string) reply {
	t.Helper()
	u, err := url.Parse(portalURL)
	if err != nil {
		t.Fatal(err)
	}
	act := call(t, "POST", svc.url("esign/portal/activate"), map[string]any{"token": u.Query().Get("token")}, nil)
	if act.Status != http.StatusOK {
		t.Fatalf("activate slot %d: %d %s", sg.Index, act.Status, act.Raw)
	}
	tok := act.str("accessToken")
	fields := sealFieldValues(act.JSON["fields"])
	v := call(t, "POST", svc.url("esign/portal/viewed"), nil, bearer(tok))
	if v.Status != http.StatusOK {
		t.Fatalf("viewed slot %d: %d %s", sg.Index, v.Status, v.Raw)
	}
	tok = v.str("accessToken")
	var ids []string
	for _, st := range esign.ConsentStatements {
		ids = append(ids, st.ID)
	}
	c := call(t, "POST", svc.url("esign/portal/consent"), map[string]any{"statements": ids, "version": esign.ConsentVersion}, bearer(tok))
	if c.Status != http.StatusOK {
		t.Fatalf("consent slot %d: %d %s", sg.Index, c.Status, c.Raw)
	}
	tok = c.str("accessToken")
	accepted, _ := c.JSON["consentsAccepted"].([]any)
	sg.Consents = nil
	for _, a := range accepted {
		sg.Consents = append(sg.Consents, a.(map[string]any))
	}
	png, err := os.ReadFile(filepath.Join("testdata", "signature.png"))
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{
		"callbackId": uuid.NewString(), "sessionId": sg.SessionID, "accessToken": tok,
		"signerName": sg.Name, "signaturePng": base64.StdEncoding.EncodeToString(png),
		"fields": fields, "consents": sg.Consents, "ip": sg.IP, "userAgent": sg.UserAgent,
	}
	return sealCallback(t, body)
}

// sealCallback posts a callback body signed with the first PORTAL_CALLBACK_SECRETS value.
func sealCallback(t *testing.T, body map[string]any) reply {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	secret := strings.Split(svc.settings["PORTAL_CALLBACK_SECRETS"], ",")[0]
	r := call(t, "POST", svc.url("esign/callback"), raw,
		map[string]string{"X-Esign-Signature": callbacksig.Sign(secret, time.Now(), raw)})
	if r.Status != http.StatusOK {
		t.Fatalf("callback: %d %s", r.Status, r.Raw)
	}
	return r
}

// sealFieldValues fills every non-signature manifest field of the slot's role.
func sealFieldValues(v any) []map[string]any {
	list, _ := v.([]any)
	var out []map[string]any
	for _, f := range list {
		m, _ := f.(map[string]any)
		name, _ := m["name"].(string)
		switch m["kind"] {
		case "initials":
			out = append(out, map[string]any{"name": name, "value": "AB"})
		case "date":
			out = append(out, map[string]any{"name": name, "value": time.Now().UTC().Format("2006-01-02")})
		case "text":
			out = append(out, map[string]any{"name": name, "value": "Sealed in e2e"})
		case "checkbox":
			out = append(out, map[string]any{"name": name, "checked": true})
		}
	}
	return out
}

// sealSigners makes the signers of a create body (buyer, seller) with their callback facts.
func sealSigners(body map[string]any, created reply) []*sealSigner {
	var out []*sealSigner
	slots, _ := created.JSON["slots"].([]any)
	for i, s := range body["signers"].([]any) {
		m := s.(map[string]any)
		sl := slots[i].(map[string]any)
		out = append(out, &sealSigner{
			Index: i, Email: m["email"].(string), Name: fmt.Sprintf("Signer %c. Sealtest", 'A'+i),
			IP: fmt.Sprintf("203.0.113.%d", 10+i), UserAgent: fmt.Sprintf("Mozilla/5.0 (e2e seal test %d)", i),
			SessionID: sl["sessionId"].(string),
		})
	}
	return out
}

// sealPortalURL is slot i's portal link from the create answer.
func sealPortalURL(created reply, i int) string {
	slots, _ := created.JSON["slots"].([]any)
	return slots[i].(map[string]any)["portalUrl"].(string)
}

// sealWaitStatus polls the status (every 200 ms, at most limit) until ok accepts it.
func sealWaitStatus(t *testing.T, tenant, corr string, limit time.Duration, what string, ok func(reply) bool) reply {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		r := status(t, tenant, corr)
		if r.Status == http.StatusOK && ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting %s for %s; last status %d %s", limit, what, r.Status, r.Raw)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sealEventKinds counts the status's audit event kinds.
func sealEventKinds(r reply) map[string]int {
	out := map[string]int{}
	evs, _ := r.JSON["events"].([]any)
	for _, e := range evs {
		if m, ok := e.(map[string]any); ok {
			out[fmt.Sprint(m["kind"])]++
		}
	}
	return out
}

// sealWaitOutbox polls the outbox until ok accepts the session's rows.
func sealWaitOutbox(t *testing.T, corr string, limit time.Duration, what string, ok func([]outbox.Row) bool) []outbox.Row {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		rows := sealOutbox(t, corr)
		if ok(rows) {
			return rows
		}
		if time.Now().After(deadline) {
			var kinds []string
			for _, r := range rows {
				kinds = append(kinds, string(r.Kind))
			}
			t.Fatalf("waiting %s for %s; outbox kinds %v", limit, what, kinds)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sealOutbox lists the outbox rows of one correlation id.
func sealOutbox(t *testing.T, corr string) []outbox.Row {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	box, err := outbox.New(acct, "outbox")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := box.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []outbox.Row
	for _, r := range rows {
		if r.CorrelationID == corr {
			out = append(out, r)
		}
	}
	return out
}

// sealDownload reads a "<container>/<name>" blob with its properties.
func sealDownload(t *testing.T, path string) ([]byte, blobstore.Props) {
	t.Helper()
	p, err := blobstore.ParsePath(path)
	if err != nil {
		t.Fatalf("blob path %q: %v", path, err)
	}
	rc, props, err := blobs(t).Open(context.Background(), p.Container, p.Name)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b, props
}

var (
	sealToolsOnce sync.Once
	sealToolsErr  string
)

// sealRequireTools makes sure pdfsig, pdftotext and qpdf exist, running
// scripts/install-pdf-tools.sh once if not; it fails under CI=true and skips elsewhere when
// they cannot be installed.
func sealRequireTools(t *testing.T) {
	t.Helper()
	missing := func() string {
		var m []string
		for _, tool := range []string{"pdfsig", "pdftotext", "qpdf"} {
			if _, err := exec.LookPath(tool); err != nil {
				m = append(m, tool)
			}
		}
		return strings.Join(m, ", ")
	}
	sealToolsOnce.Do(func() {
		if missing() == "" {
			return
		}
		script, _ := filepath.Abs("../../scripts/install-pdf-tools.sh")
		out, err := exec.Command("bash", script).CombinedOutput()
		if m := missing(); m != "" {
			sealToolsErr = fmt.Sprintf("PDF tools %s missing and could not be installed (%s, %v)", m, strings.TrimSpace(string(out)), err)
		}
	})
	if sealToolsErr != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(sealToolsErr)
		}
		t.Skip(sealToolsErr)
	}
}

// sealWriteTemp writes b to a file in a test temp dir.
func sealWriteTemp(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// sealRun runs a command and returns its combined output and exit error.
func sealRun(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}
