package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
)

// TestEraseSignerEmail: an admin erases a signer's e-mail once the session is over; the
// encrypted address and its hash are gone from the slot and from every audit row, and the
// erasure is audited. A live session refuses it; only Service.Admin may call it.
func TestEraseSignerEmail(t *testing.T) {
	t.Parallel()
	body := createBody(t, "parallel", 2)
	created := createSession(t, tenantA, body)
	groupID := created.str("groupId")
	path := "esign/session/" + groupID + "/slots/0/email"
	admin := bearer(svc.jwt(t, tenantA, "Service.Admin"))

	if r := call(t, "DELETE", svc.url(path), nil, admin); r.Status != http.StatusConflict || r.code() != "session_live" {
		t.Fatalf("erase on a live session: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "DELETE", svc.url(path), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator"))); r.Status != http.StatusForbidden {
		t.Fatalf("erase by an initiator: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "POST", svc.url("esign/session/"+groupID+"/cancel"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator"))); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "DELETE", svc.url(path), nil, bearer(svc.jwt(t, tenantB, "Service.Admin"))); r.Status != http.StatusNotFound {
		t.Fatalf("erase by another tenant: %d %s", r.Status, r.Raw)
	}

	hash := slotEmailHash(t, groupID, 0)
	if hash == "" {
		t.Fatal("slot 0 has no e-mail hash before erasure")
	}
	r := call(t, "DELETE", svc.url(path), nil, admin)
	if r.Status != http.StatusOK || r.JSON["erased"] != true || r.JSON["auditRowsScrubbed"].(float64) < 1 {
		t.Fatalf("erase: %d %s", r.Status, r.Raw)
	}
	if again := call(t, "DELETE", svc.url(path), nil, admin); again.Status != http.StatusConflict || again.code() != "already_erased" {
		t.Fatalf("erase twice: %d %s", again.Status, again.Raw)
	}

	st := status(t, tenantA, body["correlationId"].(string))
	slots := st.JSON["slots"].([]any)
	if e := slots[0].(map[string]any)["email"]; e != nil {
		t.Fatalf("slot 0 still shows an e-mail: %v", e)
	}
	if e := slots[1].(map[string]any)["email"]; e == nil {
		t.Fatal("slot 1 lost its e-mail")
	}
	kinds := map[string]int{}
	for _, e := range st.JSON["events"].([]any) {
		kinds[e.(map[string]any)["kind"].(string)]++
	}
	if kinds["pii.erased"] != 1 {
		t.Fatalf("events %v", kinds)
	}
	// Nothing in the session's partition carries the hash any more: no property of any row
	// holds it, not even inside a JSON value (the slots in the session row, the audit events'
	// data: slot.invited and slot.reinvited carry it there).
	rows := partitionRows(t, groupID)
	for _, row := range rows {
		for k, v := range row.Props {
			if strings.Contains(fmt.Sprint(v), hash) {
				t.Errorf("row %s (%v) still holds the e-mail hash in %s", row.RowKey, row.Props["kind"], k)
			}
		}
	}
}

func sessionsTable(t *testing.T) *tablestore.Store {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := tablestore.New(acct, "esignsessions")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func partitionRows(t *testing.T, groupID string) []tablestore.Entity {
	t.Helper()
	rows, err := sessionsTable(t).Query(context.Background(), groupID, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// slotEmailHash reads a slot's e-mail hash as stored: inside the session row, one JSON
// property per slot.
func slotEmailHash(t *testing.T, groupID string, slot int) string {
	t.Helper()
	e, err := sessionsTable(t).Get(context.Background(), groupID, "session")
	if err != nil {
		t.Fatal(err)
	}
	var sl struct {
		EmailHash string `json:"emailHash"`
	}
	if err := json.Unmarshal([]byte(e.String(fmt.Sprintf("slot%02d", slot))), &sl); err != nil {
		t.Fatal(err)
	}
	return sl.EmailHash
}
