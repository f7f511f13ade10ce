package fault

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/devtools/devkeys"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

const (
	tenant     = "33333333-3333-4333-8333-333333333333"
	mailDomain = "fault.example.test"
	// deadline bounds every wait for the processor's work.
	deadline = 90 * time.Second
)

var client = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

// reply is an HTTP answer with its JSON body.
type reply struct {
	Status int
	Raw    []byte
	Type   string // Content-Type
	JSON   map[string]any
}

func (r reply) str(key string) string { s, _ := r.JSON[key].(string); return s }

// call sends a request to the service (path under /api/); body is nil or a JSON value. A
// transport error is returned (Status 0): during an outage a request may fail either way.
func call(method, path string, body any, headers map[string]string) (reply, error) {
	return callCtx(context.Background(), method, path, body, headers)
}

// callCtx is call under ctx (a deadline well below the client's own time-out tells a service
// that hangs from one that answers).
func callCtx(ctx context.Context, method, path string, body any, headers map[string]string) (reply, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(b)
	}
	if raw, ok := body.(json.RawMessage); ok {
		rd = bytes.NewReader(raw)
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	req, err := http.NewRequestWithContext(ctx, method, svc.host.URL()+"/api/"+path+sep+"code="+svc.host.HostKey(), rd)
	if err != nil {
		return reply{}, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	r := reply{Status: resp.StatusCode, Raw: raw, Type: resp.Header.Get("Content-Type")}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") {
		_ = json.Unmarshal(raw, &r.JSON)
	}
	return r, nil
}

// must is call for requests that must be answered with want.
func must(t testing.TB, want int, method, path string, body any, headers map[string]string) reply {
	t.Helper()
	r, err := call(method, path, body, headers)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if r.Status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, r.Status, r.Raw, want)
	}
	return r
}

func initiator(t testing.TB) map[string]string {
	t.Helper()
	tok, err := devkeys.MintFromDir(svc.keysDir, devkeys.TokenOptions{Tenant: tenant, Roles: []string{"Esign.Initiator"}})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"Authorization": "Bearer " + tok}
}

// session is one created single-signer session.
type session struct {
	GroupID, CorrelationID string
	Signer, Requester      string // their e-mail addresses
	Link                   string // the signer's portal link
}

// document is the one-page PDF every session signs (no fields: the signature goes on an
// appended page), uploaded once.
var document = struct {
	path, hash string
}{}

func uploadDocument(t testing.TB) {
	t.Helper()
	if document.path != "" {
		return
	}
	d := pdfdoc.New()
	helv := d.Add(types.Dict{"Type": types.Name("Font"), "Subtype": types.Name("Type1"), "BaseFont": types.Name("Helvetica"), "Encoding": types.Name("WinAnsiEncoding")})
	if _, err := d.AppendPage(595.28, 841.89, []byte("BT /F1 18 Tf 72 770 Td (Fault test agreement) Tj ET\n"), types.Dict{"Font": types.Dict{"F1": helv}}); err != nil {
		t.Fatal(err)
	}
	b, err := d.Bytes(nil)
	if err != nil {
		t.Fatal(err)
	}
	st := blobs(t)
	ctx := context.Background()
	if err := st.EnsureContainer(ctx, "documents"); err != nil {
		t.Fatal(err)
	}
	name := tenant + "/fault/" + uuid.NewString() + ".pdf"
	if _, err := st.Put(ctx, "documents", name, bytes.NewReader(b), "application/pdf", nil); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	document.path, document.hash = "documents/"+name, "sha256:"+hex.EncodeToString(sum[:])
}

// newSession is a single-signer session (no OTP) with a requester to notify, and its create
// request.
func newSession(t testing.TB) (session, map[string]any) {
	t.Helper()
	uploadDocument(t)
	id := uuid.NewString()
	s := session{CorrelationID: "fault-" + id, Signer: "signer-" + id[:8] + "@" + mailDomain, Requester: "requester-" + id[:8] + "@" + mailDomain}
	return s, map[string]any{"correlationId": s.CorrelationID, "documentId": "Agreement " + id[:8], "docType": "agreement",
		"pdfBlobPath": document.path, "pdfHash": document.hash, "signingMode": "single", "requestedBy": "Fault Test",
		"requestedByEmail": s.Requester,
		"signers":          []any{map[string]any{"slotIndex": 0, "role": "signer", "email": s.Signer, "namePrefill": "Pat Signer"}}}
}

// create makes a new session (see newSession).
func create(t testing.TB, auth map[string]string) session {
	t.Helper()
	s, body := newSession(t)
	r := must(t, http.StatusCreated, "POST", "esign/session", body, auth)
	s.GroupID = r.str("groupId")
	slots, _ := r.JSON["slots"].([]any)
	if s.GroupID == "" || len(slots) != 1 {
		t.Fatalf("create answer: %s", r.Raw)
	}
	s.Link, _ = slots[0].(map[string]any)["portalUrl"].(string)
	return s
}

// sign walks the signer through activate, viewed and consent and posts the signed callback.
func sign(t testing.TB, s session) {
	t.Helper()
	u, err := url.Parse(s.Link)
	if err != nil || u.Query().Get("token") == "" {
		t.Fatalf("portal link of %s does not parse", s.CorrelationID)
	}
	a := must(t, http.StatusOK, "POST", "esign/portal/activate", map[string]any{"token": u.Query().Get("token")}, nil)
	bearer := func(r reply) map[string]string {
		return map[string]string{"Authorization": "Bearer " + r.str("accessToken")}
	}
	v := must(t, http.StatusOK, "POST", "esign/portal/viewed", nil, bearer(a))
	var ids []string
	for _, st := range esign.ConsentStatements {
		ids = append(ids, st.ID)
	}
	c := must(t, http.StatusOK, "POST", "esign/portal/consent", map[string]any{"statements": ids, "version": esign.ConsentVersion}, bearer(v))
	raw, err := json.Marshal(map[string]any{
		"callbackId": uuid.NewString(), "sessionId": a.str("sessionId"), "accessToken": c.str("accessToken"),
		"signerName": "Pat Signer", "signaturePng": signaturePNG, "fields": []any{},
		"consents": c.JSON["consentsAccepted"], "ip": "203.0.113.9", "userAgent": "fault-test/1.0",
	})
	if err != nil {
		t.Fatal(err)
	}
	secret := strings.Split(svc.settings["PORTAL_CALLBACK_SECRETS"], ",")[0]
	h := map[string]string{callbacksig.Header: callbacksig.Sign(secret, time.Now(), raw)}
	r := must(t, http.StatusOK, "POST", "esign/callback", json.RawMessage(raw), h)
	if r.str("sessionState") != "sealing" {
		t.Fatalf("callback of %s: %s", s.CorrelationID, r.Raw)
	}
}

var signaturePNG = func() string {
	img := image.NewNRGBA(image.Rect(0, 0, 300, 100))
	for x := 0; x < 300; x++ {
		img.SetNRGBA(x, 50+(x%40-20), color.NRGBA{R: 10, G: 20, B: 120, A: 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}()

// eventually polls cond every 200 ms until it holds, or fails the test after deadline.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %s waiting for %s", deadline, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func account(t testing.TB) *azconn.Account {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	return acct
}

func blobs(t testing.TB) *blobstore.Store { return blobstore.New(account(t)) }

func signedPath(s session) string { return fmt.Sprintf("%s/%s/signed.pdf", tenant, s.GroupID) }
