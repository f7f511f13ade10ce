package portalapi

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/tokens"
)

// createTransfer asks for a transfer code with tok and returns the opaque token of its link.
func (o *otpEnv) createTransfer(t *testing.T, tok string) string {
	t.Helper()
	r := o.do(t, http.MethodPost, PathTransfer, tok, "")
	r.want(t, http.StatusOK, "")
	v := r.json(t)
	link, _ := v["url"].(string)
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(link, testOrigin+"/transfer?token=") {
		t.Fatalf("url %q %v", link, err)
	}
	raw, err := base64.StdEncoding.DecodeString(v["qrPng"].(string))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil || img.Bounds().Dx() != img.Bounds().Dy() || img.Bounds().Dx()%QRModule != 0 {
		t.Fatalf("qrPng is no square PNG of %d px modules: %v", QRModule, err)
	}
	if v["expiresAt"] != o.clock.Now().Add(esign.TransferTTL).Format(time.RFC3339Nano) {
		t.Fatalf("expiresAt %v", v["expiresAt"])
	}
	opaque := u.Query().Get("token")
	if !tokens.OpaqueValid(opaque) {
		t.Fatalf("token %q is not a 256-bit opaque token", opaque)
	}
	return opaque
}

func (o *otpEnv) redeem(t *testing.T, opaque string) reply {
	t.Helper()
	return o.do(t, http.MethodPost, PathTransferRedeem, "", `{"token":"`+opaque+`"}`, "User-Agent", "new-device/1.0")
}

func TestTransferMovesSessionToNewDevice(t *testing.T) {
	t.Parallel()
	o := newOTPEnv(t)
	f, first := o.otpSession(t, esign.OTPNone, false) // a slot without OTP: the new device still passes OTP by e-mail
	o.do(t, http.MethodPost, PathViewed, first, "").want(t, http.StatusOK, "")
	opaque := o.createTransfer(t, first)

	_, slots := o.load(t, f.s.GroupID)
	rows, err := o.store.Transfer(t.Context(), f.s.GroupID, tokens.OpaqueHash(opaque))
	if err != nil || rows.Slot != 0 || rows.Generation != slots[0].Generation {
		t.Fatalf("stored transfer %+v %v", rows, err)
	}

	o.clock.Add(esign.TransferTTL - time.Second)
	r := o.redeem(t, opaque)
	r.want(t, http.StatusOK, "")
	v := r.json(t)
	second, _ := v["accessToken"].(string)
	if v["otpRequired"] != true || v["otpChannel"] != "email" || v["viewOnly"] != false || v["slotState"] != "viewed" {
		t.Fatalf("redeem answer %v", v)
	}
	claims, err := o.api.Tokens.VerifyPortalAccess(second)
	if err != nil || claims.Generation != 1 || claims.SessionID != f.slots[0].SessionID {
		t.Fatalf("new token %+v %v", claims, err)
	}
	o.redeem(t, opaque).want(t, http.StatusUnauthorized, "transfer_token_invalid")

	// The first device is now view only.
	r = o.do(t, http.MethodGet, PathSession, first, "")
	r.want(t, http.StatusOK, "")
	if r.json(t)["viewOnly"] != true {
		t.Fatalf("first device not view only: %s", r.body)
	}
	o.send(t, first, "").want(t, http.StatusConflict, "device_secondary")
	o.do(t, http.MethodPost, PathTransfer, first, "").want(t, http.StatusConflict, "device_secondary")
	o.do(t, http.MethodPost, PathConsent, first, `{"statements":["document_reviewed"],"version":"`+esign.ConsentVersion+`"}`).
		want(t, http.StatusConflict, "device_secondary")

	// The new device passes the full OTP challenge before the document.
	o.do(t, http.MethodGet, PathDocument+second, "", "").want(t, http.StatusForbidden, "otp_required")
	o.send(t, second, "").want(t, http.StatusOK, "") // at once
	if m := o.email.last(t); m.To != testEmail {
		t.Fatal("the code went elsewhere")
	}
	o.verify(t, second, codeOf(t, o.email.last(t))).want(t, http.StatusOK, "")
	o.do(t, http.MethodGet, PathDocument+second, "", "").want(t, http.StatusOK, "")

	evs, err := o.store.Events(t.Context(), f.s.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	var redeemed bool
	for _, ev := range evs {
		if ev.Kind == esign.EvSlotTransferRedeemed {
			redeemed = ev.UserAgent == "new-device/1.0" && ev.Data["generation"] == float64(1) && ev.IP != ""
		}
	}
	if !redeemed {
		t.Fatal("no slot.transfer_redeemed event with the new device's IP, user agent and generation")
	}
	assertEvents(t, o.env, f.s.GroupID, esign.EvSlotTransferCreated)
}

func TestTransferTokenExpiresAndIsNoOracle(t *testing.T) {
	t.Parallel()
	o := newOTPEnv(t)
	f, tok := o.otpSession(t, esign.OTPEmail, false)
	opaque := o.createTransfer(t, tok)
	other, _, _ := tokens.NewOpaque()
	o.clock.Add(esign.TransferTTL)
	for name, body := range map[string]string{
		"expired":   `{"token":"` + opaque + `"}`,
		"unknown":   `{"token":"` + other + `"}`,
		"malformed": `{"token":"abc"}`,
	} {
		r := o.do(t, http.MethodPost, PathTransferRedeem, "", body)
		if r.status != http.StatusUnauthorized || r.code(t) != "transfer_token_invalid" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	o.do(t, http.MethodPost, PathTransferRedeem, "", `{}`).want(t, http.StatusBadRequest, "invalid_request")
	if _, slots := o.load(t, f.s.GroupID); slots[0].Generation != 0 {
		t.Fatal("a refused redeem moved the slot")
	}
}

func TestTransferSupersededByLaterRedeem(t *testing.T) {
	t.Parallel()
	o := newOTPEnv(t)
	_, tok := o.otpSession(t, esign.OTPEmail, false)
	a := o.createTransfer(t, tok)
	b := o.createTransfer(t, tok)
	o.redeem(t, b).want(t, http.StatusOK, "")
	o.redeem(t, a).want(t, http.StatusUnauthorized, "transfer_token_invalid")
}
