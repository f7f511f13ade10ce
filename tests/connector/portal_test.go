package connector

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/connector/settings"
)

// TestPortalLinks: with SERVICE_PORTAL_URL set, `workflow create`, `deliver` and `sign` print a
// link to the reference portal's page of what they made (/workflow/{id}?pt=, /deliver/{id}?t=,
// /sign?token=) under that URL, carrying the token of the service's answer, which works on the
// service; without it they print none; `render` (a batch, which has no portal page) prints none.
func TestPortalLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const portal = "https://portal.example.test/app"
	set := connSettings(t, map[string]string{settings.KeyPortalURL: portal + "/"})
	cl, _ := newClient(t, set)
	link := func(out, page string) *url.URL {
		t.Helper()
		m := regexp.MustCompile(`portal:\s+(\S+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no portal link:\n%s", out)
		}
		u, err := url.Parse(m[1])
		if err != nil || u.Scheme+"://"+u.Host+u.Path != portal+page {
			t.Fatalf("link %q, want %s%s?...: %v", m[1], portal, page, err)
		}
		return u
	}
	id := regexp.MustCompile(`(?m)^(?:workflowId|delivery)\s*:?\s+(\S+?):?\s`)

	pkg, err := putPackage(ctx, "connector/wf-"+uuid.NewString()+".zip", offerFiles(map[string][]byte{"schema.yaml": []byte(wfSchema)}))
	if err != nil {
		t.Fatal(err)
	}
	out := ok(t, set, "workflow", "create", "--template", pkg, "--correlation-id", "links-"+uuid.NewString(), "--recipient", "pat@example.test")
	wfID := id.FindStringSubmatch(out)[1]
	u := link(out, "/workflow/"+wfID)
	if p, err := cl.WorkflowPayloadWithToken(ctx, wfID, u.Query().Get("pt")); err != nil || p.WorkflowID != wfID {
		t.Fatalf("the link's participant token: %+v %v", p, err)
	}

	out = ok(t, set, "deliver", "../e2e/testdata/plain-1p.pdf", "--to", "rae@example.test:Rae")
	dID := id.FindStringSubmatch(out)[1]
	u = link(out, "/deliver/"+dID)
	if m, err := cl.DeliveryMetadata(ctx, dID, u.Query().Get("t")); err != nil || m.DeliveryID != dID || m.RecipientName != "Rae" {
		t.Fatalf("the link's recipient token: %+v %v", m, err)
	}

	out = ok(t, set, "sign", "../e2e/testdata/plain-1p.pdf", "--signer", "buyer:bo@example.test")
	if u = link(out, "/sign"); u.Query().Get("token") == "" {
		t.Fatalf("sign link without its token:\n%s", out)
	}

	plain := connSettings(t, nil)
	for _, args := range [][]string{
		{"workflow", "create", "--template", pkg, "--correlation-id", "links-" + uuid.NewString(), "--recipient", "pat@example.test"},
		{"deliver", "../e2e/testdata/plain-1p.pdf", "--to", "rae@example.test"},
		{"sign", "../e2e/testdata/plain-1p.pdf", "--signer", "buyer:bo@example.test"},
	} {
		if out := ok(t, plain, args...); strings.Contains(out, "portal:") {
			t.Fatalf("%v without SERVICE_PORTAL_URL printed a link:\n%s", args, out)
		}
	}
	if out := ok(t, set, "render", "--template", offerPath, "--data", offersJSON(t, 2), "--yes"); strings.Contains(out, "portal:") {
		t.Fatalf("a batch printed a portal link:\n%s", out)
	}
}
