package e2e

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/notify"
)

// xferCreate asks for a transfer code from the signer's device, decodes the QR code PNG back to
// its URL (which must be the answer's url) and returns the opaque token of the link.
func xferCreate(t *testing.T, s *otpSigner) string {
	t.Helper()
	r := s.otpPortal(t, "transfer", nil)
	otpWant(t, "transfer create", r, http.StatusOK, "")
	link := r.str("url")
	raw, err := base64.StdEncoding.DecodeString(r.str("qrPng"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("qrPng is not a PNG: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	// The PNG is the code itself (no photo): decode it as a pure barcode, which reads the
	// modules directly instead of searching for finder patterns.
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]interface{}{gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		t.Fatalf("QR code not readable: %v", err)
	}
	if res.GetText() != link {
		t.Fatal("the QR code does not hold the transfer URL")
	}
	if !strings.HasPrefix(link, strings.TrimRight(svc.settings["PORTAL_URL"], "/")+"/transfer?token=") || r.str("expiresAt") == "" {
		t.Fatalf("transfer answer: url prefix or expiry wrong")
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	tok := u.Query().Get("token")
	remember("transfer token", tok)
	return tok
}

// xferRedeem redeems a transfer token as a new device; on success the returned signer is the
// new device's.
func xferRedeem(t *testing.T, from *otpSigner, tok string) (reply, *otpSigner) {
	t.Helper()
	r := call(t, "POST", svc.url("esign/portal/transfer/redeem"), map[string]any{"token": tok},
		map[string]string{"User-Agent": "e2e-new-device/1.0"})
	if r.Status != http.StatusOK {
		return r, nil
	}
	next := *from
	next.access = r.str("accessToken")
	return r, &next
}

func TestTransferToNewDevice(t *testing.T) {
	t.Parallel()
	first := otpStart(t, "sms")
	first.otpPass(t, nil, notify.SMS, 1)
	first.otpViewAndConsent(t)
	tok := xferCreate(t, first)

	r, second := xferRedeem(t, first, tok)
	otpWant(t, "redeem", r, http.StatusOK, "")
	if r.JSON["otpRequired"] != true || r.JSON["otpChannel"] != "sms" || r.JSON["viewOnly"] != false {
		t.Fatalf("redeem answer %s", r.Raw)
	}
	r, _ = xferRedeem(t, first, tok)
	otpWant(t, "second redeem", r, http.StatusUnauthorized, "transfer_token_invalid")
	r, _ = xferRedeem(t, first, strings.Repeat("A", 43))
	otpWant(t, "unknown token", r, http.StatusUnauthorized, "transfer_token_invalid")

	// The new device passes the full OTP challenge before the document or signing.
	otpWant(t, "new device document before OTP", second.otpDocument(t), http.StatusForbidden, "otp_required")
	otpWant(t, "new device callback before OTP", otpCallback(t, second.otpCallbackBody(second.access)), http.StatusForbidden, "otp_required")
	second.otpPass(t, nil, notify.SMS, 2) // at once: the transfer reset the 60-second limit
	otpWant(t, "new device document", second.otpDocument(t), http.StatusOK, "")

	// The first device is view only: its completion is refused.
	s := call(t, "GET", svc.url("esign/portal/session"), nil, bearer(first.access))
	if s.Status != http.StatusOK || s.JSON["viewOnly"] != true {
		t.Fatalf("first device session %d %s", s.Status, s.Raw)
	}
	otpWant(t, "first device callback", otpCallback(t, first.otpCallbackBody(first.access)), http.StatusConflict, "device_secondary")
	otpWant(t, "first device transfer", first.otpPortal(t, "transfer", nil), http.StatusConflict, "device_secondary")

	r = otpCallback(t, second.otpCallbackBody(second.access))
	otpWant(t, "new device callback", r, http.StatusOK, "")

	st := xferStatusEvents(t, first.groupID)
	for _, k := range []string{"slot.transfer_created", "slot.transfer_redeemed", "slot.otp_verified", "slot.signed"} {
		if !st[k] {
			t.Errorf("audit trail lacks %s", k)
		}
	}
}

// xferStatusEvents reads the session's audit event kinds through the sessions table.
func xferStatusEvents(t *testing.T, groupID string) map[string]bool {
	t.Helper()
	evs, err := xferStore(t).Events(t.Context(), groupID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, ev := range evs {
		out[ev.Kind] = true
	}
	return out
}

// TestTwoDevicesCompleteAtOnce fires the old device's and the new device's callbacks together:
// exactly one wins, and it is never the old device's.
func TestTwoDevicesCompleteAtOnce(t *testing.T) {
	t.Parallel()
	first := otpStart(t, "none")
	first.otpViewAndConsent(t)
	_, second := xferRedeem(t, first, xferCreate(t, first))
	if second == nil {
		t.Fatal("redeem refused")
	}
	second.otpPass(t, nil, notify.Email, 1) // a slot without OTP: e-mail on the new device
	replies := xferRace(t, first.otpCallbackBody(first.access), second.otpCallbackBody(second.access))
	if replies[0].Status != http.StatusConflict {
		t.Errorf("old device: %d %s, want 409", replies[0].Status, replies[0].Raw)
	}
	if replies[1].Status != http.StatusOK {
		t.Errorf("new device: %d %s, want 200", replies[1].Status, replies[1].Raw)
	}
}

// TestSameSlotTwoCallbacksAtOnce fires two callbacks of one slot with different callback ids
// together: exactly one is accepted.
func TestSameSlotTwoCallbacksAtOnce(t *testing.T) {
	t.Parallel()
	s := otpStart(t, "email")
	s.otpPass(t, nil, notify.Email, 1)
	s.otpViewAndConsent(t)
	replies := xferRace(t, s.otpCallbackBody(s.access), s.otpCallbackBody(s.access))
	ok := 0
	for _, r := range replies {
		switch r.Status {
		case http.StatusOK:
			ok++
		case http.StatusConflict:
		default:
			t.Errorf("callback: %d %s", r.Status, r.Raw)
		}
	}
	if ok != 1 {
		t.Fatalf("%d callbacks accepted, want exactly 1", ok)
	}
}

// xferRace posts the callbacks at the same moment and returns their answers in order.
func xferRace(t *testing.T, bodies ...[]byte) []reply {
	t.Helper()
	out := make([]reply, len(bodies))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, b := range bodies {
		wg.Add(1)
		go func(i int, b []byte) {
			defer wg.Done()
			<-start
			out[i] = otpCallback(t, b)
		}(i, b)
	}
	close(start)
	wg.Wait()
	return out
}

// xferStore is the service's session store on the test Azurite (read-only use).
func xferStore(t *testing.T) *sessionstore.Store {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sessionstore.New(acct, "esignsessions", "esignindex")
	if err != nil {
		t.Fatal(err)
	}
	return st
}
