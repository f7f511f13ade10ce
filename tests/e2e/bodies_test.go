package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/dispatcher/callbackapi"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/dispatch"
	documents "github.com/esign-svc/esign/shared/document" // the e2e package has its own document()
	"github.com/esign-svc/esign/shared/otp/otpflow"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/web"
)

// bodyKind is how a route reads its request body (shared/web: one function per kind).
type bodyKind int

const (
	bodyJSON     bodyKind = iota // web.DecodeJSON: a JSON object is required
	bodyOptional                 // web.DecodeOptionalJSON: a JSON object or nothing
	bodyNone                     // web.NoBody: nothing
	bodyPDF                      // web.StreamBody then documents.Uploader: one PDF
)

// routeAuth is what a route needs for the body rule, not its auth, to answer.
type routeAuth int

const (
	authNone       routeAuth = iota // anonymous, nothing to prove
	authInitiator                   // Entra ID JWT with Esign.Initiator (and the host key)
	authAdmin                       // Entra ID JWT with Service.Admin (and the host key)
	authPortal                      // the signer's portal access token as a bearer token
	authDocument                    // the portal access token in the path ({token})
	authDelivery                    // the delivery access token as ?t=
	authSigned                      // X-Esign-Signature over the raw body (the callback)
	authApprover                    // Entra ID JWT with Dispatch.Approver (and the host key)
	authWfApprover                  // Entra ID JWT with Workflow.Approver (and the host key)
	authWorkflow                    // the workflow participant's portal token as ?token=
	authReviewer                    // a workflow reviewer token as ?token=
)

// bodyRoute is one route of the dispatcher: its function, method and route template (as its
// function.json has them), how it reads its body and up to what size, what auth it needs and
// whether that auth is checked before the body (the test then supplies it: it always does).
type bodyRoute struct {
	fn, method, path string
	kind             bodyKind
	limit            int
	auth             routeAuth
	authFirst        bool
}

// bodyRoutes is every route the dispatcher registers but the CORS preflights (OPTIONS, which
// read no body and answer 204 to anything). A new route is covered by adding its row;
// TestBodyRoutesCoverEveryFunction fails until it has one. The requester routes (Entra ID
// JWT) check the caller, licence and role first, then the body; the portal's and the
// recipient's routes check the body first, then the token in it or beside it.
var bodyRoutes = []bodyRoute{
	{"Health", "GET", "health", bodyNone, web.MaxJSONBody, authNone, false},
	{"CreateSession", "POST", "esign/session", bodyJSON, web.MaxJSONBody, authInitiator, true},
	{"SessionStatus", "GET", "esign/session/{correlationId}/status", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"SessionStatusByGroup", "GET", "esign/session/by-group/{groupId}/status", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"ResendInvite", "POST", "esign/session/{correlationId}/resend-invite", bodyOptional, web.MaxJSONBody, authInitiator, true},
	{"CancelSession", "POST", "esign/session/{groupId}/cancel", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"RevokeSession", "POST", "esign/session/{groupId}/revoke", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"EraseSignerEmail", "DELETE", "esign/session/{groupId}/slots/{slotIndex}/email", bodyNone, web.MaxJSONBody, authAdmin, true},
	{"RetrySeal", "POST", "esign/session/{groupId}/seal/retry", bodyNone, web.MaxJSONBody, authAdmin, true},
	{"PortalActivate", "POST", "esign/portal/activate", bodyJSON, web.MaxJSONBody, authNone, false},
	{"PortalSession", "GET", "esign/portal/session", bodyNone, web.MaxJSONBody, authPortal, false},
	{"PortalViewed", "POST", "esign/portal/viewed", bodyNone, web.MaxJSONBody, authPortal, false},
	{"PortalConsent", "POST", "esign/portal/consent", bodyJSON, web.MaxJSONBody, authPortal, false},
	{"PortalDecline", "POST", "esign/portal/decline", bodyOptional, web.MaxJSONBody, authPortal, false},
	{"PortalOTPSend", "POST", "esign/portal/otp/send", bodyOptional, web.MaxJSONBody, authPortal, false},
	{"PortalOTPVerify", "POST", "esign/portal/otp/verify", bodyJSON, otpflow.MaxBody, authPortal, false},
	{"PortalTransferCreate", "POST", "esign/portal/transfer", bodyNone, web.MaxJSONBody, authPortal, false},
	{"PortalTransferRedeem", "POST", "esign/portal/transfer/redeem", bodyJSON, web.MaxJSONBody, authNone, false},
	{"DocumentProxy", "GET", "esign/document/{token}", bodyNone, web.MaxJSONBody, authDocument, false},
	{"DocumentProxy", "HEAD", "esign/document/{token}", bodyNone, web.MaxJSONBody, authDocument, false},
	{"Callback", "POST", "esign/callback", bodyJSON, callbackapi.MaxBody, authSigned, true}, // the HMAC first; the size before it
	{"CreateDelivery", "POST", "delivery", bodyJSON, web.MaxJSONBody, authInitiator, true},
	{"ListDeliverySessions", "GET", "delivery-sessions", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"RevokeDelivery", "POST", "delivery/{deliveryId}/revoke", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"DeliveryMetadata", "GET", "delivery/{deliveryId}", bodyNone, web.MaxJSONBody, authDelivery, false},
	{"DeliverySAS", "GET", "delivery/{deliveryId}/sas", bodyNone, web.MaxJSONBody, authDelivery, false},
	{"DeliveryDownload", "POST", "delivery/{deliveryId}/download", bodyNone, web.MaxJSONBody, authDelivery, false},
	{"DeliveryAccess", "POST", "delivery/{deliveryId}/access", bodyJSON, 4 << 10, authDelivery, false},
	{"DeliveryOTPSend", "POST", "delivery/{deliveryId}/otp/send", bodyNone, web.MaxJSONBody, authDelivery, false},
	{"DeliveryOTPVerify", "POST", "delivery/{deliveryId}/otp/verify", bodyJSON, otpflow.MaxBody, authDelivery, false},
	{"UploadDocument", "POST", "documents", bodyPDF, documents.MaxBytes, authInitiator, true},
	{"Render", "POST", "render", bodyJSON, dispatch.MaxBodySize, authInitiator, true},
	{"ListBatches", "GET", "dispatch/batch", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"GetBatch", "GET", "dispatch/batch/{batchId}", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"BatchRecords", "GET", "dispatch/batch/{batchId}/records", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"BatchReceipt", "GET", "dispatch/batch/{batchId}/receipt", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"DecideBatch", "POST", "dispatch/batch/{batchId}/decide", bodyJSON, web.MaxJSONBody, authApprover, true},
	{"CancelBatch", "POST", "dispatch/batch/{batchId}/cancel", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"CreateWorkflow", "POST", "workflow", bodyJSON, web.MaxJSONBody, authInitiator, true},
	{"GetWorkflow", "GET", "workflow/{workflowId}", bodyNone, web.MaxJSONBody, authWorkflow, false},
	{"WorkflowStep", "PATCH", "workflow/{workflowId}/step/{stepIndex}", bodyJSON, web.MaxJSONBody, authWorkflow, false},
	{"WorkflowAdvance", "POST", "workflow/{workflowId}/advance", bodyNone, web.MaxJSONBody, authWorkflow, false},
	{"WorkflowFixValidation", "POST", "workflow/{workflowId}/fix-validation", bodyNone, web.MaxJSONBody, authWorkflow, false},
	{"WorkflowRequestChanges", "POST", "workflow/{workflowId}/request-changes", bodyJSON, web.MaxJSONBody, authReviewer, false},
	{"WorkflowGovernanceDecision", "POST", "workflow/{workflowId}/governance-decision", bodyJSON, web.MaxJSONBody, authReviewer, false},
	{"WorkflowReject", "POST", "workflow/{workflowId}/reject", bodyOptional, web.MaxJSONBody, authReviewer, false},
	{"WorkflowStatus", "GET", "workflow/{workflowId}/status", bodyNone, web.MaxJSONBody, authWorkflow, false},
	{"WorkflowApprove", "POST", "workflow/{workflowId}/approve", bodyOptional, web.MaxJSONBody, authWfApprover, true},
	{"WorkflowEscalate", "POST", "workflow/{workflowId}/escalate", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"WorkflowCancel", "POST", "workflow/{workflowId}/cancel", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"WorkflowSeal", "POST", "workflow/{workflowId}/seal", bodyOptional, web.MaxJSONBody, authInitiator, true},
	{"WorkflowExport", "GET", "workflow/{workflowId}/export", bodyNone, web.MaxJSONBody, authInitiator, true},
	{"WorkflowResendInvite", "POST", "workflow/{workflowId}/resend-invite", bodyNone, web.MaxJSONBody, authWorkflow, false},
	{"WorkflowOTPSend", "POST", "workflow/{workflowId}/otp/send", bodyNone, web.MaxJSONBody, authWorkflow, false},
	{"WorkflowOTPVerify", "POST", "workflow/{workflowId}/otp/verify", bodyJSON, otpflow.MaxBody, authWorkflow, false},
}

// bodyCase is one body sent to every route, and the answer each kind of route gives it.
type bodyCase struct {
	name, contentType string
	pdfType           string // the Content-Type sent to the PDF route, when not contentType
	body              func(rt bodyRoute) []byte
	json, none, pdf   bodyAnswer // json: the answer of JSON and optional-JSON routes
	noneOnly          bool       // sent to routes that take no body only (a JSON route may accept it)
}

func (c bodyCase) typeFor(rt bodyRoute) string {
	if rt.kind == bodyPDF && c.pdfType != "" {
		return c.pdfType
	}
	return c.contentType
}

type bodyAnswer struct {
	status int
	code   string
	field  bool // the problem names the whole body (field "body")
}

func fixed(s string) func(bodyRoute) []byte { return func(bodyRoute) []byte { return []byte(s) } }

var (
	notAllowed = bodyAnswer{http.StatusBadRequest, web.CodeBodyNotAllowed, true}
	notObject  = bodyAnswer{http.StatusBadRequest, web.CodeInvalidRequest, true}
	tooLarge   = bodyAnswer{http.StatusRequestEntityTooLarge, web.CodeBodyTooLarge, false}
	notJSON    = bodyAnswer{http.StatusBadRequest, web.CodeUnsupportedMediaType, false}
	notPDF     = bodyAnswer{http.StatusBadRequest, web.CodeUnsupportedMediaType, false}
)

var bodyCases = []bodyCase{
	{name: "wrong Content-Type", contentType: "text/plain", body: fixed(`{}`),
		json: notJSON, none: notAllowed, pdf: notPDF},
	// Past the limit by more than net/http drains (256 KiB): the host must then close the
	// connection, and the next row's request on the client's pool must not fail. The PDF
	// route gets it as a PDF (a JSON type would be refused for its type first).
	{name: "over the limit", contentType: "application/json", pdfType: "application/pdf", body: func(rt bodyRoute) []byte {
		pad := rt.limit + 300<<10
		return []byte(`{"pad":"` + strings.Repeat("a", pad) + `"}`)
	}, json: tooLarge, none: tooLarge, pdf: tooLarge},
	{name: "null", contentType: "application/json", body: fixed(`null`), json: notObject, none: notAllowed, pdf: notPDF},
	{name: "array", contentType: "application/json", body: fixed(`[]`), json: notObject, none: notAllowed, pdf: notPDF},
	{name: "string", contentType: "application/json", body: fixed(`"x"`), json: notObject, none: notAllowed, pdf: notPDF},
	{name: "number", contentType: "application/json", body: fixed(`42`), json: notObject, none: notAllowed, pdf: notPDF},
	{name: "not JSON", contentType: "application/json", body: fixed(`hello`),
		json: bodyAnswer{http.StatusBadRequest, web.CodeInvalidJSON, true}, none: notAllowed, pdf: notPDF},
	{name: "a PDF that does not parse", contentType: "application/pdf", body: fixed("%PDF-1.7\n1 0 obj\n<<"),
		json: notJSON, none: notAllowed, pdf: bodyAnswer{http.StatusBadRequest, pdfdoc.CodeUnreadable, true}},
	// The empty object `{}` is no body to a route that takes none (TestNoBodyRoutesTakeAnEmptyObject);
	// an object with a member is still refused.
	{name: "object with a member", contentType: "application/json", body: fixed(`{"reason":"x"}`), none: notAllowed, noneOnly: true},
	{name: "text", contentType: "text/plain", body: fixed(`cancel, please`), none: notAllowed, noneOnly: true},
}

// bodyFixture holds the live session, portal token and delivery the routes act on (none of
// the requests below is accepted, so none of them changes anything).
type bodyFixture struct {
	vals     map[string]string // path parameters
	access   string            // portal access token
	delivery string            // delivery access token
	secret   string            // callback secret
	workflow string            // workflow participant token
	reviewer string            // workflow reviewer token (of a turn that is over)
}

func newBodyFixture(t *testing.T) *bodyFixture {
	t.Helper()
	body := createBody(t, "parallel", 1)
	created := createSession(t, tenantA, body)
	slots := slotsOf(t, created, "slots")
	act := activate(t, slots[0].Link)
	if act.Status != http.StatusOK {
		t.Fatalf("activate: %d %s", act.Status, act.Raw)
	}
	d := createDelivery(t, tenantA, deliveryBody(t, "secure-email", 1))[0]
	wf := createWorkflow(t, tenantA, wfBody(wfPackage(t, false)))
	// the reviewer link the service e-mailed, spent by an escalation past its approver
	wantWF(t, fill(t, wf, "Acme", 50), http.StatusOK, "pending-approval")
	reviewer := reviewerLink(t, wf.ID)
	wantWF(t, wfJWT(t, "POST", wf.ID, "/escalate", "Esign.Initiator", nil), http.StatusOK, "pending-approval")
	return &bodyFixture{
		vals: map[string]string{"groupId": created.str("groupId"), "correlationId": body["correlationId"].(string),
			"slotIndex": "0", "deliveryId": d.ID, "batchId": uuid.NewString(), "token": url.PathEscape(act.str("accessToken")),
			"workflowId": wf.ID, "stepIndex": "0"},
		access: act.str("accessToken"), delivery: d.Token, secret: callbackSecret(t),
		workflow: wf.Token, reviewer: reviewer,
	}
}

// send sends raw to rt, with the route's auth when withAuth.
func (f *bodyFixture) send(t *testing.T, rt bodyRoute, contentType string, raw []byte, withAuth bool) reply {
	t.Helper()
	path := rt.path
	for k, v := range f.vals {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	u := svc.url(path)
	h := map[string]string{"Content-Type": contentType}
	if withAuth {
		switch rt.auth {
		case authInitiator:
			h["Authorization"] = "Bearer " + svc.jwt(t, tenantA, "Esign.Initiator")
		case authAdmin:
			h["Authorization"] = "Bearer " + svc.jwt(t, tenantA, "Service.Admin")
		case authApprover:
			h["Authorization"] = "Bearer " + svc.jwt(t, tenantA, "Dispatch.Approver")
		case authWfApprover:
			h["Authorization"] = "Bearer " + svc.jwt(t, tenantA, "Workflow.Approver")
		case authWorkflow:
			u += "&token=" + url.QueryEscape(f.workflow)
		case authReviewer:
			u += "&token=" + url.QueryEscape(f.reviewer)
		case authPortal:
			h["Authorization"] = "Bearer " + f.access
		case authDelivery:
			u += "&t=" + url.QueryEscape(f.delivery)
		case authSigned:
			h[callbacksig.Header] = callbacksig.Sign(f.secret, time.Now(), raw)
		}
	} else if rt.auth == authDocument {
		u = strings.Replace(u, f.vals["token"], "not-a-token", 1)
	}
	var body any = raw
	if rt.kind == bodyPDF && len(raw) > rt.limit {
		// Chunked, so that the route reads to its limit and the host drains the rest: declared,
		// 50 MiB are refused unread and the host closes the connection under a client that
		// reads only once it has written (TestUploadDocumentLimit sends that case).
		body = io.MultiReader(bytes.NewReader(raw))
	}
	return call(t, rt.method, u, body, h)
}

// TestEveryRouteReadsItsBodyOneWay sends every body case to every route, with the auth the
// route needs, and wants the body rule's answer: the status, the problem code and, where the
// whole body is at fault, the field "body". call fails the test on any 5xx.
func TestEveryRouteReadsItsBodyOneWay(t *testing.T) {
	t.Parallel()
	f := newBodyFixture(t)
	for _, rt := range bodyRoutes {
		t.Run(rt.fn+" "+rt.method, func(t *testing.T) {
			t.Parallel()
			for _, c := range bodyCases {
				want := c.json
				switch {
				case rt.kind == bodyNone:
					want = c.none
				case c.noneOnly:
					continue
				case rt.kind == bodyPDF:
					want = c.pdf
				}
				r := f.send(t, rt, c.typeFor(rt), c.body(rt), true)
				checkBodyAnswer(t, rt, c.name, r, want)
			}
			// The order the row states: a route that checks its auth first answers 401 to a
			// request without it, whatever the body; any other lets the body rule answer.
			if rt.auth == authNone {
				return
			}
			r := f.send(t, rt, "application/json", []byte(`null`), false)
			want := notObject
			switch {
			case rt.authFirst:
				want = bodyAnswer{status: http.StatusUnauthorized}
			case rt.kind == bodyNone:
				want = notAllowed
			}
			checkBodyAnswer(t, rt, "null without auth", r, want)
		})
	}
}

func checkBodyAnswer(t *testing.T, rt bodyRoute, what string, r reply, want bodyAnswer) {
	t.Helper()
	if r.Status != want.status {
		t.Errorf("%s: %d %s, want %d %s", what, r.Status, r.Raw, want.status, want.code)
		return
	}
	if rt.method == http.MethodHead || want.code == "" {
		return // a HEAD answer has no body to name the code
	}
	if r.code() != want.code {
		t.Errorf("%s: code %q (%s), want %q", what, r.code(), r.Raw, want.code)
	}
	if want.field && !slices.Equal(r.fields(), []string{web.BodyField}) {
		t.Errorf("%s: fields %v, want [%s]", what, r.fields(), web.BodyField)
	}
}

// TestBodyRoutesCoverEveryFunction holds bodyRoutes equal to the dispatcher's HTTP functions:
// one row per function and method (but OPTIONS), on the function's route template.
func TestBodyRoutesCoverEveryFunction(t *testing.T) {
	t.Parallel()
	root, err := azuritetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join(root, "dispatcher", "functions", "*", "function.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no function.json found: %v", err)
	}
	rows := map[string]string{} // "Fn METHOD" -> route template
	for _, rt := range bodyRoutes {
		key := rt.fn + " " + rt.method
		if _, dup := rows[key]; dup {
			t.Errorf("two rows for %s", key)
		}
		rows[key] = rt.path
	}
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var fj struct {
			Bindings []struct {
				Type, Route string
				Methods     []string
			}
		}
		if err := json.Unmarshal(b, &fj); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		fn := filepath.Base(filepath.Dir(p))
		for _, bd := range fj.Bindings {
			if bd.Type != "httpTrigger" {
				continue
			}
			for _, m := range bd.Methods {
				if m = strings.ToUpper(m); m == http.MethodOptions {
					continue
				}
				key := fn + " " + m
				path, ok := rows[key]
				switch {
				case !ok:
					t.Errorf("no bodyRoutes row for %s (%s)", key, bd.Route)
				case path != bd.Route:
					t.Errorf("%s: row path %q, function.json route %q", key, path, bd.Route)
				}
				delete(rows, key)
			}
		}
	}
	for key := range rows {
		t.Errorf("bodyRoutes row %s is no function's route and method", key)
	}
}

// TestNoBodyRoutesTakeAnEmptyObject: every route that takes no body (the spec's "-") answers
// an empty JSON object `{}`, with a JSON Content-Type or none and blanks inside, exactly as it
// answers no body at all (many HTTP clients send `{}` on every POST); an object with a member
// is still 400 body_not_allowed (TestEveryRouteReadsItsBodyOneWay's row "object with a
// member", on objects that exist). Before issue 22 `{}` was 400 body_not_allowed. The requests
// name objects that do not exist, or leave out the auth of a route that reads its body first,
// so that none of them changes anything; a cancel with `{}` then ends a real workflow.
func TestNoBodyRoutesTakeAnEmptyObject(t *testing.T) {
	t.Parallel()
	ghost := &bodyFixture{vals: map[string]string{"groupId": uuid.NewString(), "correlationId": uuid.NewString(),
		"slotIndex": "0", "deliveryId": uuid.NewString(), "batchId": uuid.NewString(), "token": "not-a-token",
		"workflowId": uuid.NewString(), "stepIndex": "0"}}
	n := 0
	for _, rt := range bodyRoutes {
		if rt.kind != bodyNone {
			continue
		}
		n++
		t.Run(rt.fn+" "+rt.method, func(t *testing.T) {
			t.Parallel()
			withAuth := rt.authFirst || rt.auth == authNone // else the body rule answers before the auth
			none := ghost.send(t, rt, "", nil, withAuth)
			if none.Status == http.StatusBadRequest && none.code() == web.CodeBodyNotAllowed {
				t.Fatalf("no body: %d %s", none.Status, none.Raw)
			}
			for _, c := range []struct{ contentType, body string }{
				{"application/json", `{}`},
				{"application/json; charset=utf-8", " { }\n"},
				{"", `{}`},
			} {
				r := ghost.send(t, rt, c.contentType, []byte(c.body), withAuth)
				if r.Status != none.Status || (rt.method != http.MethodHead && r.code() != none.code()) {
					t.Errorf("%q as %q: %d %s; no body: %d %s", c.body, c.contentType, r.Status, r.Raw, none.Status, none.Raw)
				}
			}
		})
	}
	if n < 20 {
		t.Fatalf("%d routes take no body; the table lost some", n)
	}
	t.Run("a cancel with {} ends the workflow", func(t *testing.T) {
		t.Parallel()
		wf := createWorkflow(t, tenantA, wfBody(wfPackage(t, false)))
		wantWF(t, wfJWT(t, "POST", wf.ID, "/cancel", "Esign.Initiator", map[string]any{}), http.StatusOK, "cancelled")
	})
}
