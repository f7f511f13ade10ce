package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/devtools/licensingstub"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
)

// refusedTenant is a tenant the suite's licensing service refuses (DESIGN 19); flakyTenant one
// whose first usage post it fails.
const (
	refusedTenant = "55555555-5555-4555-8555-555555555555"
	refusedReason = "tenant suspended by the operator"
	flakyTenant   = "66666666-6666-4666-8666-666666666666"
)

// licensingService is the suite's licensing service (the stand-in make run starts too): both
// apps run with LICENSING_URL naming it, so every create asks it and every metered event is
// posted to it. It verifies the bearer with the dev operator key once the service made it.
var licensingService = licensingstub.New(nil, map[string]string{refusedTenant: refusedReason})

func init() {
	srv := httptest.NewServer(licensingService) // lives as long as the test binary
	extraSettings[licence.SettingServiceURL] = srv.URL
	started = append(started, func(e *env) error {
		key, err := licence.ParsePublicKey(e.settings[licence.SettingPublicKey])
		if err != nil {
			return err
		}
		licensingService.SetKey(key)
		return nil
	})
}

// TestLicensingServiceAtCreateAndMetering: a session create asks POST /v1/validate with the
// tenant, the feature and the correlationId; its seal is metered as session.sealed exactly once
// (posted by the processor's LicenceUsage job from the licence-usage queue), a delivery create
// as delivery.created per session, a batch as batch.record per record; /api/health reports the
// service. (workflow.sealed: TestWorkflowHappyPath.)
func TestLicensingServiceAtCreateAndMetering(t *testing.T) {
	t.Parallel()
	body := createBody(t, "single", 1)
	corr := body["correlationId"].(string)
	created := slotsOf(t, createSession(t, tenantA, body), "slots")
	asked := false
	for _, v := range licensingService.Received().Validate {
		asked = asked || v == (licensing.ValidateRequest{TenantID: tenantA, Feature: "esign", CorrelationID: corr})
	}
	if !asked {
		t.Fatalf("the create did not ask the licensing service: %+v", licensingService.Received().Validate)
	}

	sign(t, created[0].Link)
	st := waitState(t, tenantA, corr, "complete")
	wantMetered(t, licensing.KindSessionSealed, tenantA, st.str("groupId"))

	// a delivery create is metered per delivery session, a batch per record made
	for _, d := range createDelivery(t, tenantA, deliveryBody(t, "secure-email", 2)) {
		wantMetered(t, licensing.KindDeliveryCreated, tenantA, d.ID)
	}
	submitter := newPerson(t, tenantA, "metered", "Esign.Initiator")
	b := submitBatch(t, submitter, batchBody(uploadPackage(t, examplePackage(t)), offers(2), false), http.StatusAccepted)
	batchID := b.Header.Get("X-Service-BatchId")
	if done := waitBatch(t, submitter, batchID); done.str("state") != "completed" {
		t.Fatalf("batch %s", done.Raw)
	}
	for i := range 2 {
		wantMetered(t, licensing.KindBatchRecord, tenantA, batchID, strconv.Itoa(i))
	}

	h := call(t, "GET", svc.host.URL()+"/api/health", nil, nil)
	if h.Status != http.StatusOK || !strings.Contains(string(h.Raw), `"licensing":{"reachable":true}`) {
		t.Fatalf("health %d %s", h.Status, h.Raw)
	}
}

// TestLicensingUsageRetried: the licensing service fails the first usage post of a tenant's seal;
// the processor's LicenceUsage job fails the invocation, the queue delivers the message again
// and the record is then kept exactly once: nothing is lost.
func TestLicensingUsageRetried(t *testing.T) {
	t.Parallel()
	licensingService.FailUsage(flakyTenant, 1)
	path, hash := uploadFixtureAs(t, flakyTenant, "template-3p.pdf")
	body := sessionBodyFor(path, hash)
	created := slotsOf(t, createSession(t, flakyTenant, body), "slots")
	sign(t, created[0].Link)
	st := waitState(t, flakyTenant, body["correlationId"].(string), "complete")
	wantMetered(t, licensing.KindSessionSealed, flakyTenant, st.str("groupId"))
	if !strings.Contains(svc.logs.String(), "licence-usage: session.sealed session.sealed:"+st.str("groupId")+" not recorded (attempt 1); will retry") {
		t.Fatal("the first post was not refused and retried")
	}
}

// TestLicensingServiceUnreachable runs a dispatcher whose LICENSING_URL answers nothing: creates
// fall back to the offline licence (201), the fall-back is logged once for both within the
// minute, and /api/health reports the service unreachable (degraded).
func TestLicensingServiceUnreachable(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	h, out := dispatcherWith(t, map[string]string{licence.SettingServiceURL: closed.URL})
	tok := bearer(svc.jwt(t, tenantA, "Esign.Initiator"))
	for range 2 {
		if r := call(t, "POST", h.URL()+"/api/esign/session?code="+h.HostKey(), createBody(t, "single", 1), tok); r.Status != http.StatusCreated {
			t.Fatalf("create with the licensing service down: %d %s", r.Status, r.Raw)
		}
	}
	if n := strings.Count(out.String(), "the offline licence alone decides"); n != 1 {
		t.Errorf("the fall-back was logged %d times for two creates within a minute, want once", n)
	}
	// degraded but 200: creates go on under the offline licence, so a load balancer keeps the app
	resp, err := client.Get(h.URL() + "/api/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), `"status":"degraded"`) ||
		!strings.Contains(string(raw), `"licensing":{"reachable":false,"error":"unreachable"}`) {
		t.Fatalf("health %d %s", resp.StatusCode, raw)
	}
}

// wantMetered waits until the licensing service holds the usage record of kind for tenant's
// object (its id "<kind>:<parts>") and checks it was posted exactly once.
func wantMetered(t testing.TB, kind licensing.Kind, tenant string, parts ...string) {
	t.Helper()
	id := licensing.NewUsage(kind, tenant, time.Now(), parts...).ID
	var got licensingstub.Received
	// a retried post comes back after the processor's visibility time-out (30 s)
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if got = licensingService.Received(); got.PostsByID[id] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no usage record %s after 90 s", id)
		}
	}
	n := 0
	for _, u := range got.Usage {
		if u.ID == id {
			n++
			if u.TenantID != tenant || u.Kind != kind || u.At.IsZero() {
				t.Errorf("usage record %+v", u)
			}
		}
	}
	if n != 1 || got.PostsByID[id] != 1 {
		t.Fatalf("%s kept %d times, posted %d times; want once", id, n, got.PostsByID[id])
	}
}

// TestLicensingServiceRefusal: a tenant the service refuses gets 403 licence_refused with the
// service's reason at session, delivery, batch and workflow create and at a render that would
// start a signing session, and nothing is made.
func TestLicensingServiceRefusal(t *testing.T) {
	t.Parallel()
	tok := bearer(svc.jwt(t, refusedTenant, "Esign.Initiator"))
	path, hash := uploadFixtureAs(t, refusedTenant, "template-3p.pdf")
	session := sessionBodyFor(path, hash)
	pkg := uploadPackage(t, examplePackage(t))
	signed := renderBody(pkg, offerRecord())
	signed["templateSettings"] = map[string]any{"esign": map[string]any{"enabled": true, "signers": offerSigners()}}
	for _, c := range []struct {
		name, route, feature string
		body                 map[string]any
		headers              map[string]string
	}{
		{"session", "esign/session", "esign", session, tok},
		{"delivery", "delivery", "delivery", deliveryBodyFor(path), tok},
		{"batch", "render", "dispatch", batchBody(pkg, offers(2), false), map[string]string{"Authorization": tok["Authorization"], "Accept": "application/json"}},
		{"workflow", "workflow", "workflow", wfBody(wfPackage(t, false)), tok},
		{"render with esign", "render", "esign", signed, tok},
	} {
		r := call(t, "POST", svc.url(c.route), c.body, c.headers)
		if r.Status != http.StatusForbidden || r.code() != licensing.CodeRefused || r.str("reason") != refusedReason ||
			r.str("feature") != c.feature || !strings.Contains(r.str("detail"), refusedReason) ||
			!strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s: %d %s", c.name, r.Status, r.Raw)
		}
	}
	if r := status(t, refusedTenant, session["correlationId"].(string)); r.Status != http.StatusNotFound {
		t.Errorf("the refused session exists: %d %s", r.Status, r.Raw)
	}
}
