package portalapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/esign"
)

func TestActivateConsumesLink(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	manifest := []esign.ManifestField{
		{Name: "esign.signer.signature", Role: "signer", Kind: esign.FieldSignature, Page: 1},
		{Name: "esign.signer.initials", Role: "signer", Kind: esign.FieldInitials, Page: 1},
		{Name: "esign.witness1.signature", Role: "witness1", Kind: esign.FieldSignature, Page: 2},
	}
	f := e.newSession(t, sessionOpts{slots: 2, manifest: manifest})

	r := e.do(t, http.MethodPost, PathActivate, "", `{"token":"`+f.links[0]+`"}`)
	r.want(t, http.StatusOK, "")
	v := r.json(t)
	tok, _ := v["accessToken"].(string)
	for k, want := range map[string]any{"documentName": f.s.DocumentID, "docType": "lease", "role": "signer",
		"namePrefill": "Signer 0", "otpRequired": false, "otpChannel": "none", "signingMode": "parallel",
		"slotState": "activated", "sessionState": "in_progress", "documentUrl": PathDocument + tok,
		"expiresAt": f.s.ExpiresAt.Format(time.RFC3339Nano), "viewOnly": false} {
		if v[k] != want {
			t.Errorf("%s = %v, want %v", k, v[k], want)
		}
	}
	if fields, _ := v["fields"].([]any); len(fields) != 2 {
		t.Errorf("fields %v, want the 2 of role signer", v["fields"])
	}
	st, _ := v["consentStatements"].([]any)
	if len(st) != 3 || st[0].(map[string]any)["text"] != esign.ConsentStatements[0].Text {
		t.Errorf("consentStatements %v", st)
	}
	claims, err := e.api.Tokens.VerifyPortalAccess(tok)
	if err != nil || claims.SessionID != f.slots[0].SessionID || claims.SlotIndex != 0 {
		t.Fatalf("access token %+v, %v", claims, err)
	}
	s, slots := e.load(t, f.s.GroupID)
	if s.State != esign.SessionInProgress || slots[0].State != esign.SlotActivated || !slots[0].LinkUsed {
		t.Fatalf("after activation: session %s, slot %s used %v", s.State, slots[0].State, slots[0].LinkUsed)
	}
	events, err := e.store.Events(context.Background(), f.s.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, ev := range events {
		if ev.Kind == esign.EvSlotActivated && ev.ActorKind == "signer" && ev.ActorID == f.slots[0].SessionID {
			found = true
		}
	}
	if !found {
		t.Fatalf("no slot.activated event by the signer in %+v", events)
	}

	e.do(t, http.MethodPost, PathActivate, "", `{"token":"`+f.links[0]+`"}`).want(t, http.StatusUnauthorized, "link_used")
	// Bad requests.
	e.do(t, http.MethodPost, PathActivate, "", `{"token":""}`).want(t, http.StatusBadRequest, "invalid_request")
	e.do(t, http.MethodPost, PathActivate, "", `{"token":`).want(t, http.StatusBadRequest, "invalid_json")
	e.do(t, http.MethodPost, PathActivate, "", `{"token":"abc.def.ghi"}`).want(t, http.StatusUnauthorized, "token_invalid")
	// An access token is not a link.
	e.do(t, http.MethodPost, PathActivate, "", `{"token":"`+tok+`"}`).want(t, http.StatusUnauthorized, "token_wrong_kind")
}

func TestActivateReplacedLink(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t, sessionOpts{})
	e.activate(t, f, 0)
	// resend-invite: a fresh link id replaces the used one.
	fresh := uuid.NewString()
	e.update(t, f.s.GroupID, func(s *esign.Session, slots []esign.Slot) esign.Change {
		slots[0].LinkJTI, slots[0].LinkUsed = fresh, false
		return esign.Change{Slots: []int{0}}
	})
	e.do(t, http.MethodPost, PathActivate, "", `{"token":"`+f.links[0]+`"}`).want(t, http.StatusUnauthorized, "link_replaced")
	_, slots := e.load(t, f.s.GroupID)
	newLink := e.link(t, f.s, &slots[0])
	e.do(t, http.MethodPost, PathActivate, "", `{"token":"`+newLink+`"}`).want(t, http.StatusOK, "")
	e.do(t, http.MethodPost, PathActivate, "", `{"token":"`+newLink+`"}`).want(t, http.StatusUnauthorized, "link_used")
}

func TestActivateSequentialNotYetInvited(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t, sessionOpts{mode: esign.ModeSequential, slots: 2})
	e.do(t, http.MethodPost, PathActivate, "", `{"token":"`+f.links[1]+`"}`).want(t, http.StatusConflict, "slot_not_yet_open")
	if _, slots := e.load(t, f.s.GroupID); slots[1].LinkUsed {
		t.Fatal("a refused activation consumed the link")
	}
}

func TestAccessTokenRefresh(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t, sessionOpts{ttl: 2 * time.Hour})
	tok := e.activate(t, f, 0)

	e.clock.Add(20 * time.Minute)
	r := e.do(t, http.MethodGet, PathSession, tok, "")
	r.want(t, http.StatusOK, "")
	next, _ := r.json(t)["accessToken"].(string)
	exp, _ := time.Parse(time.RFC3339Nano, r.json(t)["accessTokenExpiresAt"].(string))
	if want := e.clock.Now().Add(30 * time.Minute); !exp.Equal(want) {
		t.Fatalf("refreshed token expires %v, want %v", exp, want)
	}
	e.clock.Add(15 * time.Minute) // 35 minutes after activation: the first token has lapsed
	e.do(t, http.MethodGet, PathSession, tok, "").want(t, http.StatusUnauthorized, "token_expired")
	r = e.do(t, http.MethodPost, PathViewed, next, "")
	r.want(t, http.StatusOK, "")
	if r.json(t)["accessToken"] == "" || r.json(t)["slotState"] != "viewed" {
		t.Fatalf("viewed answer %s", r.body)
	}
	// Sliding: each answer gives 30 minutes more, until the token stops at the session's expiry.
	cur := r.json(t)["accessToken"].(string)
	for range 3 {
		e.clock.Add(25 * time.Minute)
		r = e.do(t, http.MethodGet, PathSession, cur, "")
		r.want(t, http.StatusOK, "")
		cur = r.json(t)["accessToken"].(string)
	}
	exp, _ = time.Parse(time.RFC3339Nano, r.json(t)["accessTokenExpiresAt"].(string))
	if !exp.Equal(f.s.ExpiresAt) {
		t.Fatalf("token expires %v, not at the session's expiry %v", exp, f.s.ExpiresAt)
	}
	// No token, junk token.
	e.do(t, http.MethodGet, PathSession, "", "").want(t, http.StatusUnauthorized, "token_missing")
	e.do(t, http.MethodGet, PathSession, "junk", "").want(t, http.StatusUnauthorized, "token_invalid")
	e.do(t, http.MethodGet, PathSession, f.links[0], "").want(t, http.StatusUnauthorized, "token_wrong_kind")
}

func TestViewedAndConsent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t, sessionOpts{})
	tok := e.activate(t, f, 0)
	body := `{"statements":["document_reviewed","electronic_signature","legally_binding"],"version":"` + esign.ConsentVersion + `"}`
	e.do(t, http.MethodPost, PathConsent, tok, body).want(t, http.StatusConflict, "not_viewed") // not viewed yet
	e.do(t, http.MethodPost, PathViewed, tok, "").want(t, http.StatusOK, "")

	for _, tc := range []struct{ name, body, code string }{
		{"old version", `{"statements":["document_reviewed"],"version":"2020-01-01"}`, "consent_version_changed"},
		{"no statements", `{"statements":[],"version":"` + esign.ConsentVersion + `"}`, "invalid_request"},
		{"no version", `{"statements":["document_reviewed"]}`, "invalid_request"},
		{"unknown statement", `{"statements":["nope"],"version":"` + esign.ConsentVersion + `"}`, "invalid_request"},
		{"unknown field", `{"statements":["document_reviewed"],"version":"` + esign.ConsentVersion + `","x":1}`, "unknown_field"},
	} {
		r := e.do(t, http.MethodPost, PathConsent, tok, tc.body)
		if r.status < 400 || r.status >= 500 || r.code(t) != tc.code {
			t.Errorf("%s: %d %s, want code %s", tc.name, r.status, r.body, tc.code)
		}
	}
	r := e.do(t, http.MethodPost, PathConsent, tok, body)
	r.want(t, http.StatusOK, "")
	if acc, _ := r.json(t)["consentsAccepted"].([]any); len(acc) != 3 {
		t.Fatalf("consentsAccepted %s", r.body)
	}
	_, slots := e.load(t, f.s.GroupID)
	if len(slots[0].Consents) != 3 || slots[0].Consents[1].Text != esign.ConsentStatements[1].Text {
		t.Fatalf("stored consents %+v", slots[0].Consents)
	}
}

func TestSecondaryDeviceIsViewOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t, sessionOpts{})
	tok := e.activate(t, f, 0)
	e.update(t, f.s.GroupID, func(s *esign.Session, slots []esign.Slot) esign.Change {
		slots[0].Generation = 1 // a cross-device redeem happened
		return esign.Change{Slots: []int{0}}
	})
	r := e.do(t, http.MethodGet, PathSession, tok, "")
	r.want(t, http.StatusOK, "")
	if r.json(t)["viewOnly"] != true {
		t.Fatalf("viewOnly not set: %s", r.body)
	}
	e.do(t, http.MethodPost, PathConsent, tok, `{"statements":["document_reviewed"],"version":"`+esign.ConsentVersion+`"}`).
		want(t, http.StatusConflict, "device_secondary")
	res, outs := e.invokeDecline(t, tok, "")
	res.want(t, http.StatusConflict, "device_secondary")
	if len(outs) != 0 {
		t.Fatalf("a refused decline queued %v", outs)
	}
}

func TestDeclineRequiredEndsSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t, sessionOpts{slots: 2, requester: true})
	tok := e.activate(t, f, 0)
	const reason = "I do not agree with clause 7"
	res, outs := e.invokeDecline(t, tok, `{"reason":"`+reason+`"}`)
	res.want(t, http.StatusOK, "")
	if v := res.json(t); v["slotState"] != "declined" || v["sessionState"] != "cancelled" || v["accessToken"] == "" {
		t.Fatalf("decline answer %s", res.body)
	}
	notice := string(outs["notify"])
	if !strings.Contains(notice, `"kind":"requester_decline_notice"`) || !strings.Contains(notice, f.s.GroupID) {
		t.Fatalf("notify output %s", notice)
	}
	if _, ok := outs["seal"]; ok {
		t.Fatal("a declined session queued a seal")
	}
	s, slots := e.load(t, f.s.GroupID)
	if s.State != esign.SessionCancelled || s.CancelReason != esign.ReasonDeclined || slots[0].State != esign.SlotDeclined {
		t.Fatalf("session %s/%s slot %s", s.State, s.CancelReason, slots[0].State)
	}
	events, err := e.store.Events(context.Background(), f.s.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		// The reason is evidence (issue 11: a declined signer keeps what was recorded).
		if ev.Kind == esign.EvSlotDeclined && (ev.Data["reasonGiven"] != true || ev.Data["reason"] != "I do not agree with clause 7") {
			t.Fatalf("slot.declined data %v", ev.Data)
		}
	}
	// The session is over for the other signer too.
	e.do(t, http.MethodPost, PathActivate, "", `{"token":"`+f.links[1]+`"}`).want(t, http.StatusGone, "session_cancelled")
	res, _ = e.invokeDecline(t, tok, "")
	res.want(t, http.StatusGone, "session_cancelled")
}

func TestDeclineOptionalKeepsSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t, sessionOpts{slots: 2, optional: map[int]bool{1: true}})
	tok := e.activate(t, f, 1)
	res, outs := e.invokeDecline(t, tok, "")
	res.want(t, http.StatusOK, "")
	if len(outs) != 0 {
		t.Fatalf("without requestedByEmail nothing is queued, got %v", outs)
	}
	if s, _ := e.load(t, f.s.GroupID); s.State != esign.SessionInProgress {
		t.Fatalf("session %s after an optional decline", s.State)
	}
	res, _ = e.invokeDecline(t, tok, `{"reason":"`+strings.Repeat("x", 501)+`"}`)
	res.want(t, http.StatusBadRequest, "invalid_request")
}

func TestGoneAndClosed(t *testing.T) {
	t.Parallel()
	consent := `{"statements":["document_reviewed"],"version":"` + esign.ConsentVersion + `"}`
	type call struct{ name, method, path, body string }
	calls := func(tok, link string) []call {
		return []call{
			{"session", http.MethodGet, PathSession, ""},
			{"viewed", http.MethodPost, PathViewed, ""},
			{"consent", http.MethodPost, PathConsent, consent},
			{"decline", http.MethodPost, PathDecline, ""},
			{"document", http.MethodGet, PathDocument + tok, ""},
			{"activate", http.MethodPost, PathActivate, `{"token":"` + link + `"}`},
		}
	}
	for _, tc := range []struct {
		name   string
		end    func(e *env, f *fixture)
		status int
		code   string
	}{
		{"expired (clock past expiry, long after the token)", func(e *env, f *fixture) { e.clock.Add(3 * time.Hour) }, http.StatusGone, "session_expired"},
		{"expired (just past expiry)", func(e *env, f *fixture) { e.clock.Add(time.Hour + time.Second) }, http.StatusGone, "session_expired"},
		{"cancelled", func(e *env, f *fixture) {
			e.update(t, f.s.GroupID, func(s *esign.Session, slots []esign.Slot) esign.Change {
				ch, _ := esign.Cancel(s, e.clock.Now(), esign.ReasonCancelled, "oid")
				return ch
			})
		}, http.StatusGone, "session_cancelled"},
		{"sealing", func(e *env, f *fixture) {
			e.update(t, f.s.GroupID, func(s *esign.Session, slots []esign.Slot) esign.Change {
				s.State = esign.SessionSealing
				return esign.Change{}
			})
		}, http.StatusConflict, "session_not_live"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			f := e.newSession(t, sessionOpts{slots: 2, ttl: time.Hour})
			tok := e.activate(t, f, 0)
			tc.end(e, f)
			for _, c := range calls(tok, f.links[1]) {
				r := e.do(t, c.method, c.path, tok, c.body)
				if r.status != tc.status || r.code(t) != tc.code {
					t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.body, tc.status, tc.code)
				}
			}
			if _, slots := e.load(t, f.s.GroupID); slots[1].LinkUsed || slots[0].State != esign.SlotActivated {
				t.Errorf("an ended session changed: slot0 %s, link1 used %v", slots[0].State, slots[1].LinkUsed)
			}
		})
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{PathActivate, PathDocument + "x"} {
		r := e.do(t, http.MethodOptions, path, "", "", "Origin", testOrigin, "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "authorization, content-type")
		if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != testOrigin ||
			!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Authorization") ||
			r.header.Get("Access-Control-Allow-Methods") == "" || r.header.Get("Access-Control-Max-Age") == "" {
			t.Errorf("%s preflight from the portal: %d %v", path, r.status, r.header)
		}
		r = e.do(t, http.MethodOptions, path, "", "", "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
		for k := range r.header {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("%s preflight from another origin got %s", path, k)
			}
		}
	}
	r := e.do(t, http.MethodPost, PathActivate, "", `{"token":"x"}`, "Origin", testOrigin)
	if r.header.Get("Access-Control-Allow-Origin") != testOrigin || !strings.Contains(strings.Join(r.header.Values("Vary"), ","), "Origin") {
		t.Errorf("actual response from the portal origin: %v", r.header)
	}
	r = e.do(t, http.MethodPost, PathActivate, "", `{"token":"x"}`, "Origin", "https://evil.example")
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("actual response from another origin: %v", r.header)
	}
}

func TestDocumentProxy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t, sessionOpts{slots: 2, otp: map[int]bool{1: true}})
	tok := e.activate(t, f, 0)
	r := e.do(t, http.MethodGet, PathDocument+tok, "", "")
	r.want(t, http.StatusOK, "")
	if !bytes.Equal(r.body, pdfFixture) {
		t.Fatalf("streamed %d bytes, not the fixture", len(r.body))
	}
	for k, want := range map[string]string{
		"Content-Type": "application/pdf", "Content-Length": "125", "Cache-Control": "no-store",
		"X-Content-Type-Options": "nosniff", "Content-Disposition": `inline; filename="Lease_agreement_2026_11.pdf"`,
	} {
		if k == "Content-Length" {
			want = strconv.Itoa(len(pdfFixture))
		}
		if got := r.header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if r.header.Get("ETag") == "" {
		t.Error("no ETag")
	}
	h := e.do(t, http.MethodHead, PathDocument+tok, "", "")
	if h.status != http.StatusOK || len(h.body) != 0 || h.header.Get("Content-Length") != strconv.Itoa(len(pdfFixture)) {
		t.Errorf("HEAD: %d %v %d bytes", h.status, h.header, len(h.body))
	}
	e.do(t, http.MethodGet, PathDocument+"junk", "", "").want(t, http.StatusUnauthorized, "token_invalid")
	// A slot that must pass OTP first.
	otpTok := e.activate(t, f, 1)
	e.do(t, http.MethodGet, PathDocument+otpTok, "", "").want(t, http.StatusForbidden, "otp_required")
}

func TestCheckDocumentOTP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		sl   esign.Slot
		ok   bool
	}{
		{"no otp", esign.Slot{OTPChannel: esign.OTPNone, State: esign.SlotActivated}, true},
		{"unset channel", esign.Slot{State: esign.SlotActivated}, true},
		{"otp pending", esign.Slot{OTPChannel: esign.OTPSMS, State: esign.SlotActivated}, false},
		{"otp verified", esign.Slot{OTPChannel: esign.OTPEmail, State: esign.SlotOTPVerified,
			OTP: esign.OTPState{VerifiedAt: time.Now()}}, true},
		{"viewed after otp", esign.Slot{OTPChannel: esign.OTPEmail, State: esign.SlotViewed,
			OTP: esign.OTPState{VerifiedAt: time.Now()}}, true},
		{"state without a verification record", esign.Slot{OTPChannel: esign.OTPEmail, State: esign.SlotOTPVerified}, false},
		{"verified on an earlier device", esign.Slot{OTPChannel: esign.OTPEmail, State: esign.SlotViewed, Generation: 1,
			OTP: esign.OTPState{VerifiedAt: time.Now(), VerifiedGen: 0}}, false},
		{"new device without OTP configured", esign.Slot{OTPChannel: esign.OTPNone, State: esign.SlotViewed, Generation: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := CheckDocumentOTP(&tc.sl)
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestSafeFilename(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Lease 2026.pdf":         "Lease_2026.pdf",
		`a"b\r\n.PDF`:            "a_b_r_n.PDF",
		"":                       "document.pdf",
		"../../etc/passwd":       "etc_passwd.pdf",
		"Über-Vertrag":           "ber-Vertrag.pdf",
		strings.Repeat("x", 300): strings.Repeat("x", 96) + ".pdf",
	} {
		if got := SafeFilename(in); got != want {
			t.Errorf("SafeFilename(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDocumentProxyRanges: one range is 206 with Content-Range and exactly those bytes; a range
// past the end is 416; an If-Range that no longer matches, or several ranges, get the whole PDF.
func TestDocumentProxyRanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t, sessionOpts{slots: 1})
	tok := e.activate(t, f, 0)
	size := len(pdfFixture)
	full := e.do(t, http.MethodGet, PathDocument+tok, "", "")
	etag := full.header.Get("ETag")
	if full.header.Get("Accept-Ranges") != "bytes" {
		t.Errorf("Accept-Ranges %q", full.header.Get("Accept-Ranges"))
	}
	cases := []struct {
		name          string
		hdr           []string
		status        int
		from, to      int // expected body pdfFixture[from:to]
		contentRangeF string
	}{
		{"first ten", []string{"Range", "bytes=0-9"}, http.StatusPartialContent, 0, 10, "bytes 0-9/%d"},
		{"open end", []string{"Range", "bytes=100-"}, http.StatusPartialContent, 100, size, "bytes 100-%d/%d"},
		{"suffix", []string{"Range", "bytes=-5"}, http.StatusPartialContent, size - 5, size, "bytes %d-%d/%d"},
		{"matching If-Range", []string{"Range", "bytes=0-0", "If-Range", etag}, http.StatusPartialContent, 0, 1, "bytes 0-0/%d"},
		{"stale If-Range", []string{"Range", "bytes=0-0", "If-Range", `"0xstale"`}, http.StatusOK, 0, size, ""},
		{"several ranges", []string{"Range", "bytes=0-1,5-6"}, http.StatusOK, 0, size, ""},
	}
	for _, tc := range cases {
		r := e.do(t, http.MethodGet, PathDocument+tok, "", "", tc.hdr...)
		if r.status != tc.status || !bytes.Equal(r.body, pdfFixture[tc.from:tc.to]) {
			t.Errorf("%s: %d, %d bytes", tc.name, r.status, len(r.body))
			continue
		}
		if tc.status == http.StatusPartialContent {
			var want string
			switch tc.name {
			case "open end":
				want = fmt.Sprintf(tc.contentRangeF, size-1, size)
			case "suffix":
				want = fmt.Sprintf(tc.contentRangeF, size-5, size-1, size)
			default:
				want = fmt.Sprintf(tc.contentRangeF, size)
			}
			if got := r.header.Get("Content-Range"); got != want || r.header.Get("Content-Length") != strconv.Itoa(tc.to-tc.from) {
				t.Errorf("%s: Content-Range %q (want %q), Content-Length %q", tc.name, got, want, r.header.Get("Content-Length"))
			}
		}
	}
	past := e.do(t, http.MethodGet, PathDocument+tok, "", "", "Range", fmt.Sprintf("bytes=%d-", size))
	if past.status != http.StatusRequestedRangeNotSatisfiable || past.header.Get("Content-Range") != fmt.Sprintf("bytes */%d", size) {
		t.Errorf("past the end: %d %v", past.status, past.header)
	}
	// The OTP gate and the token check come before any range handling.
	e.do(t, http.MethodGet, PathDocument+"junk", "", "", "Range", "bytes=0-9").want(t, http.StatusUnauthorized, "token_invalid")
}

// TestDeclineReasonIsText: the reason may break lines with \n or \r\n; any other control,
// separator or bidi control is refused naming "reason", and nothing is queued or changed.
func TestDeclineReasonIsText(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t, sessionOpts{slots: 2, requester: true})
	tok := e.activate(t, f, 0)
	for _, reason := range []string{`no\u0007`, `a\rb`, `a\tb`, `a\u0085b`, `\u202eoN`, `a\u2029b`} {
		res, outs := e.invokeDecline(t, tok, `{"reason":"`+reason+`"}`)
		res.want(t, http.StatusBadRequest, "invalid_request")
		if !strings.Contains(string(res.body), `"field":"reason"`) || len(outs) != 0 {
			t.Fatalf("reason %s: %s, outputs %v", reason, res.body, outs)
		}
	}
	if _, slots := e.load(t, f.s.GroupID); slots[0].State == esign.SlotDeclined {
		t.Fatal("a refused reason declined the slot")
	}
	res, _ := e.invokeDecline(t, tok, `{"reason":"Clause 7:\r\nnot agreed.\nSorry."}`)
	res.want(t, http.StatusOK, "")
}

// TestResendMakesEarlierTokensViewOnly: after a resend-invite the access token of the earlier
// activation is view-only, as after a cross-device redeem; the new link's token acts.
func TestResendMakesEarlierTokensViewOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t, sessionOpts{})
	old := e.activate(t, f, 0)
	e.do(t, http.MethodPost, PathViewed, old, "").want(t, http.StatusOK, "")
	e.update(t, f.s.GroupID, func(s *esign.Session, slots []esign.Slot) esign.Change {
		ch, err := esign.Reinvite(s, slots, 0, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		slots[0].LinkJTI, slots[0].LinkUsed = "resent-link", false // as the resend route does
		return ch
	})
	consent := `{"statements":["document_reviewed"],"version":"` + esign.ConsentVersion + `"}`
	e.do(t, http.MethodPost, PathConsent, old, consent).want(t, http.StatusConflict, "device_secondary")
	if r := e.do(t, http.MethodGet, PathSession, old, ""); r.status != http.StatusOK || r.json(t)["viewOnly"] != true {
		t.Fatalf("the earlier token after a resend: %d %s", r.status, r.body)
	}
	res, outs := e.invokeDecline(t, old, "")
	res.want(t, http.StatusConflict, "device_secondary")
	if len(outs) != 0 {
		t.Fatalf("a refused decline queued %v", outs)
	}

	s, slots := e.load(t, f.s.GroupID)
	f.links[0] = e.link(t, s, &slots[0])
	tok := e.activate(t, f, 0)
	e.do(t, http.MethodPost, PathViewed, tok, "").want(t, http.StatusOK, "") // no OTP asked of a slot without one
	e.do(t, http.MethodPost, PathConsent, tok, consent).want(t, http.StatusOK, "")
}

// TestViewNamesTheDocumentByItsTitle: the signer's page names the document by its title (a
// render's, or the create request's documentName) when the session has one.
func TestViewNamesTheDocumentByItsTitle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.newSession(t, sessionOpts{})
	e.update(t, f.s.GroupID, func(s *esign.Session, _ []esign.Slot) esign.Change {
		s.DocumentTitle = "Lease — Flat 4B"
		return esign.Change{}
	})
	r := e.do(t, http.MethodPost, PathActivate, "", `{"token":"`+f.links[0]+`"}`)
	r.want(t, http.StatusOK, "")
	if got := r.json(t)["documentName"]; got != "Lease — Flat 4B" {
		t.Fatalf("documentName %v, want the session's title", got)
	}
}
