package e2e

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
)

// delivered is one created delivery session as the create answer gave it.
type delivered struct {
	ID, Recipient, Link, Token string
}

// deliveryBody is a valid create request for a fresh copy of plain-1p.pdf with n recipients.
func deliveryBody(t testing.TB, mode string, n int) map[string]any {
	t.Helper()
	path, _ := uploadFixture(t, "plain-1p.pdf")
	var rcpts []any
	for i := 0; i < n; i++ {
		rcpts = append(rcpts, map[string]any{"email": email(i), "name": "Recipient " + string(rune('A'+i)), "role": "reader"})
	}
	b := map[string]any{"correlationId": "dlv-" + uuid.NewString(), "documentId": "DOC-7", "documentName": "Statement 2026.pdf",
		"pdfBlobPath": path, "mode": mode, "recipients": rcpts, "requesterOrg": "Contoso Legal", "message": "Please find the statement attached."}
	if mode != "secure-email" {
		b["sharePointTarget"] = map[string]any{"siteUrl": "https://contoso.sharepoint.com/sites/Legal", "libraryPath": "Documents", "folderPath": "Deliveries/2026"}
	}
	return b
}

// createDelivery posts body as tenant and returns the sessions (201 required).
func createDelivery(t testing.TB, tenant string, body map[string]any) []delivered {
	t.Helper()
	r := call(t, "POST", svc.url("delivery"), body, bearer(svc.jwt(t, tenant, "Esign.Initiator")))
	if r.Status != http.StatusCreated {
		t.Fatalf("create delivery: %d %s", r.Status, r.Raw)
	}
	list, _ := r.JSON["sessions"].([]any)
	var out []delivered
	for _, x := range list {
		m, _ := x.(map[string]any)
		d := delivered{ID: m["deliveryId"].(string), Recipient: m["recipient"].(string), Link: m["portalUrl"].(string)}
		d.Token = deliveryToken(t, d.Link)
		out = append(out, d)
	}
	return out
}

// deliveryToken is the t parameter of a delivery link (remembered for the log check).
func deliveryToken(t testing.TB, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal("delivery link does not parse")
	}
	tok := u.Query().Get("t")
	if tok == "" {
		t.Fatal("delivery link without t")
	}
	remember("delivery token", tok)
	return tok
}

// recipientCall calls a recipient route (anonymous: no host key) with the token.
func recipientCall(t testing.TB, method, id, sub, tok string, body any) reply {
	t.Helper()
	u := svc.host.URL() + "/api/delivery/" + id + sub + "?t=" + url.QueryEscape(tok)
	return call(t, method, u, body, nil)
}

// deliverySessions lists the tenant's sessions of a correlationId.
func deliverySessions(t testing.TB, tenant, corr string) []map[string]any {
	t.Helper()
	r := call(t, "GET", svc.url("delivery-sessions?correlationId="+url.QueryEscape(corr)), nil, bearer(svc.jwt(t, tenant, "Esign.Initiator")))
	if r.Status != http.StatusOK {
		t.Fatalf("list deliveries: %d %s", r.Status, r.Raw)
	}
	var out []map[string]any
	for _, x := range r.JSON["sessions"].([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

func summaryOf(t testing.TB, tenant, corr, id string) map[string]any {
	t.Helper()
	for _, s := range deliverySessions(t, tenant, corr) {
		if s["deliveryId"] == id {
			return s
		}
	}
	t.Fatalf("delivery %s not listed", id)
	return nil
}

// deliveryStore opens the service's delivery tables (to read audit trails and move the clock).
func deliveryStore(t testing.TB) *deliverystore.Store {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := deliverystore.New(acct, deliverystore.TableSessions, deliverystore.TableIndex)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// auditKinds is the delivery's audit trail as event kinds, in order.
func auditKinds(t testing.TB, id string) []string {
	t.Helper()
	evs, err := deliveryStore(t).Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

// rewind changes a stored session as time passing would (expiry, OTP expiry).
func rewind(t testing.TB, id string, change func(s *delivery.Session)) {
	t.Helper()
	st := deliveryStore(t)
	s, err := st.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	change(s)
	if err := st.Apply(context.Background(), s, delivery.Change{}); err != nil {
		t.Fatal(err)
	}
}

// deliveryMail waits for the first outbox message of kind to recipient.
func deliveryMail(t testing.TB, recipient, kind string) mail {
	t.Helper()
	var got mail
	eventually(t, kind+" e-mail", func() bool {
		for _, m := range mailTo(t, recipient) {
			if string(m.Kind) == kind {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
