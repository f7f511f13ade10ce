package delivery

// The delivery state machine as a table, without storage: every state (sent, opened,
// downloaded, revoked, and expired by time from each live state) x OTP setting x exported
// transition, with the resulting stored state, the audit events in order and the error's
// code. The expectations follow the spec (Delivery: 410 on any recipient access once expired
// or revoked, 403 download before OTP, 400 OTP send when not required or already verified,
// one send per 60 seconds) and the package doc, never a call of the machine; a transition that
// fails must leave the session untouched and produce no event.

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/otp"
)

// dNow is within the link's life (t0 .. t0+1h), dLate past it.
var dNow, dLate = t0.Add(10 * time.Minute), t0.Add(61 * time.Minute)

// column is one column of the matrix: a stored state, read within or past expiresAt.
type column struct {
	name   string
	stored State
	late   bool // the step runs at dLate
}

func (c column) now() time.Time {
	if c.late {
		return dLate
	}
	return dNow
}

// The columns: the four stored states, and each live one read past expiresAt.
var columns = [8]column{
	{name: "sent", stored: StateSent}, {name: "opened", stored: StateOpened},
	{name: "downloaded", stored: StateDownloaded}, {name: "revoked", stored: StateRevoked},
	{name: "expired_from_sent", stored: StateSent, late: true}, {name: "expired_from_opened", stored: StateOpened, late: true},
	{name: "expired_from_downloaded", stored: StateDownloaded, late: true}, {name: "revoked_past_expiry", stored: StateRevoked, late: true},
}

type otpSetting string

const (
	otpOff     otpSetting = "no_otp"
	otpWaiting otpSetting = "otp_code_sent" // a live code with hash "h", sent two minutes ago
	otpPassed  otpSetting = "otp_verified"
)

// views is the view count of the fixture in a stored state.
func views(st State) int {
	return map[State]int{StateOpened: 1, StateDownloaded: 2}[st]
}

// fixture is a delivery (mode both) in stored state st with the given OTP setting, its
// timestamps consistent with the state.
func fixture(st State, o otpSetting) *Session {
	s := &Session{DeliveryID: "d1", Mode: ModeBoth, State: st, RecipientHash: "rh", RecipientEnc: "enc",
		UploadState: UploadPending, CreatedAt: t0, SentAt: t0, ExpiresAt: t0.Add(time.Hour), ViewCount: views(st)}
	if st == StateOpened || st == StateDownloaded {
		s.OpenedAt = t0.Add(time.Minute)
	}
	if st == StateDownloaded {
		s.DownloadedAt = t0.Add(2 * time.Minute)
	}
	if st == StateRevoked {
		s.RevokedAt = t0.Add(3 * time.Minute)
	}
	switch o {
	case otpWaiting:
		s.RequireOTP = true
		s.OTP = otp.State{Channel: OTPChannel, Destination: "m", CodeHash: "h", SentAt: dNow.Add(-2 * time.Minute),
			ExpiresAt: dNow.Add(8 * time.Minute)}
	case otpPassed:
		s.RequireOTP = true
		s.OTP = otp.State{Channel: OTPChannel, Destination: "m", SentAt: t0, VerifiedAt: t0.Add(time.Minute)}
	}
	return s
}

// The exported transitions, each as a step over a session at a time.
var steps = map[string]func(s *Session, now time.Time) (Change, error){
	"Invited":      func(s *Session, now time.Time) (Change, error) { return Invited(s, now, "email") },
	"InviteFailed": func(s *Session, now time.Time) (Change, error) { return InviteFailed(s, now, "mailbox_unknown"), nil },
	"Open":         Open,
	"Download":     Download,
	"IssueSAS": func(s *Session, now time.Time) (Change, error) {
		return IssueSAS(s, now, now.Add(15*time.Minute), "sas")
	},
	"Revoke": func(s *Session, now time.Time) (Change, error) { return Revoke(s, now), nil },
	"Uploaded": func(s *Session, now time.Time) (Change, error) {
		return Uploaded(s, now, "https://x/d.pdf", "item1", "d.pdf"), nil
	},
	"UploadFailed": func(s *Session, now time.Time) (Change, error) {
		return UploadFailedNow(s, now, "graph_forbidden", "no admin consent", 2), nil
	},
	"SendOTP":     func(s *Session, now time.Time) (Change, error) { return SendOTP(s, now, "h2", "m2", 0) },
	"UndoOTPSend": func(s *Session, now time.Time) (Change, error) { return UndoOTPSend(s, now, "provider_down"), nil },
	"VerifyOTP": func(s *Session, now time.Time) (Change, error) {
		ch, out, err := VerifyOTP(s, now, func(h string) bool { return h == "h" }, 0)
		if err == nil && out != otp.Passed {
			err = fmt.Errorf("outcome %v with the right code", out)
		}
		return ch, err
	},
}

// Cells: the stored state after a step that succeeds with the row's events, the same with
// " (no event)" for a step that succeeds and records nothing, or "<status> <code>" for a step
// refused (which must change nothing).
const (
	goneR   = "410 delivery_revoked" // spec: 410 on any recipient access; revoked wins
	goneE   = "410 delivery_expired"
	otpReq  = "403 otp_required"     // spec: download before OTP
	otpNone = "400 otp_not_required" // spec: OTP send when not required
	otpDone = "400 otp_already_verified"
)

// matrix is state x event -> state, events, error, written from the spec's Delivery rows and
// the package doc (opening is allowed before OTP; a downloaded session stays downloaded;
// revoking is idempotent and may end an expired session explicitly; the system's own records
// (invite failure, upload, failed code send) are never refused).
var matrix = []struct {
	step   string
	otp    otpSetting
	events []string
	upload UploadState // checked when set
	cells  [8]string   // per column
}{
	{"Invited", otpOff, []string{EvInvited}, "", [8]string{"sent", "opened", "downloaded", goneR, goneE, goneE, goneE, goneR}},
	{"InviteFailed", otpOff, []string{EvInviteFailed}, "", [8]string{"sent", "opened", "downloaded", "revoked", "sent", "opened", "downloaded", "revoked"}},
	{"Open", otpOff, []string{EvOpened}, "", [8]string{"opened", "opened", "downloaded", goneR, goneE, goneE, goneE, goneR}},
	{"Open", otpWaiting, []string{EvOpened}, "", [8]string{"opened", "opened", "downloaded", goneR, goneE, goneE, goneE, goneR}},
	{"Open", otpPassed, []string{EvOpened}, "", [8]string{"opened", "opened", "downloaded", goneR, goneE, goneE, goneE, goneR}},
	{"Download", otpOff, []string{EvDownloaded}, "", [8]string{"downloaded", "downloaded", "downloaded", goneR, goneE, goneE, goneE, goneR}},
	{"Download", otpWaiting, nil, "", [8]string{otpReq, otpReq, otpReq, goneR, goneE, goneE, goneE, goneR}},
	{"Download", otpPassed, []string{EvDownloaded}, "", [8]string{"downloaded", "downloaded", "downloaded", goneR, goneE, goneE, goneE, goneR}},
	{"IssueSAS", otpOff, []string{EvSASIssued}, "", [8]string{"sent", "opened", "downloaded", goneR, goneE, goneE, goneE, goneR}},
	{"IssueSAS", otpWaiting, nil, "", [8]string{otpReq, otpReq, otpReq, goneR, goneE, goneE, goneE, goneR}},
	{"IssueSAS", otpPassed, []string{EvSASIssued}, "", [8]string{"sent", "opened", "downloaded", goneR, goneE, goneE, goneE, goneR}},
	{"Revoke", otpOff, []string{EvRevoked}, "", [8]string{"revoked", "revoked", "revoked", "revoked (no event)", "revoked", "revoked", "revoked", "revoked (no event)"}},
	{"Uploaded", otpOff, []string{EvUploaded}, UploadDone, [8]string{"sent", "opened", "downloaded", "revoked", "sent", "opened", "downloaded", "revoked"}},
	{"UploadFailed", otpOff, []string{EvUploadFailed}, UploadFailed, [8]string{"sent", "opened", "downloaded", "revoked", "sent", "opened", "downloaded", "revoked"}},
	{"SendOTP", otpOff, nil, "", [8]string{otpNone, otpNone, otpNone, goneR, goneE, goneE, goneE, goneR}},
	{"SendOTP", otpWaiting, []string{EvOTPSent}, "", [8]string{"sent", "opened", "downloaded", goneR, goneE, goneE, goneE, goneR}},
	{"SendOTP", otpPassed, nil, "", [8]string{otpDone, otpDone, otpDone, goneR, goneE, goneE, goneE, goneR}},
	{"UndoOTPSend", otpWaiting, []string{EvOTPSendFailed}, "", [8]string{"sent", "opened", "downloaded", "revoked", "sent", "opened", "downloaded", "revoked"}},
	{"VerifyOTP", otpOff, nil, "", [8]string{otpNone, otpNone, otpNone, goneR, goneE, goneE, goneE, goneR}},
	{"VerifyOTP", otpWaiting, []string{EvOTPVerified}, "", [8]string{"sent", "opened", "downloaded", goneR, goneE, goneE, goneE, goneR}},
	{"VerifyOTP", otpPassed, nil, "", [8]string{otpDone, otpDone, otpDone, goneR, goneE, goneE, goneE, goneR}},
}

func eventKinds(ch Change) []string {
	var out []string
	for _, e := range ch.Events {
		out = append(out, e.Kind)
	}
	return out
}

func TestDeliveryMatrix(t *testing.T) {
	t.Parallel()
	for _, r := range matrix {
		step := steps[r.step]
		for i, col := range columns {
			t.Run(r.step+"/"+col.name+"/"+string(r.otp), func(t *testing.T) {
				s := fixture(col.stored, r.otp)
				ch, err := step(s, col.now())
				cell := r.cells[i]
				var status int
				var wantCode string
				if _, e := fmt.Sscanf(cell, "%d %s", &status, &wantCode); e == nil {
					if code(err) != wantCode || apperr.KindOf(err).Status() != status {
						t.Fatalf("got %v (%d), want %s", err, apperr.KindOf(err).Status(), cell)
					}
					if untouched := fixture(col.stored, r.otp); !ch.Empty() || !reflect.DeepEqual(s, untouched) {
						t.Errorf("refused, yet events %v and session %+v", eventKinds(ch), s)
					}
					return
				}
				if err != nil {
					t.Fatalf("error %v, want %s", err, cell)
				}
				wantState, quiet := strings.CutSuffix(cell, " (no event)")
				wantEvents := r.events
				if quiet {
					wantEvents = nil
				}
				if string(s.State) != wantState {
					t.Errorf("state %s, want %s", s.State, wantState)
				}
				if got := eventKinds(ch); !slices.Equal(got, wantEvents) {
					t.Errorf("events %v, want %v", got, wantEvents)
				}
				if r.upload != "" && s.UploadState != r.upload {
					t.Errorf("upload %q, want %q", s.UploadState, r.upload)
				}
			})
		}
	}
}

// Data the audit events carry, per column where it depends on the state.
func TestDeliveryEventData(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		step, column string
		otp          otpSetting
		key          string
		value        any
	}{
		{"Open", "sent", otpOff, "viewCount", 1},
		{"Open", "downloaded", otpOff, "viewCount", 3},
		{"Download", "opened", otpOff, "first", true},
		{"Download", "downloaded", otpOff, "first", false},
		{"Revoke", "opened", otpOff, "previousState", "opened"},
		{"Revoke", "expired_from_downloaded", otpOff, "previousState", "expired"},
		{"IssueSAS", "opened", otpOff, "expiresAt", stamp(dNow.Add(15 * time.Minute))},
		{"SendOTP", "opened", otpWaiting, "destination", "m2"},
		{"VerifyOTP", "opened", otpWaiting, "destination", "m"},
		{"UploadFailed", "sent", otpOff, "code", "graph_forbidden"},
		{"UndoOTPSend", "sent", otpWaiting, "code", "provider_down"},
		{"InviteFailed", "sent", otpOff, "code", "mailbox_unknown"},
	} {
		t.Run(tc.step+"/"+tc.column+"/"+tc.key, func(t *testing.T) {
			t.Parallel()
			i := slices.IndexFunc(columns[:], func(c column) bool { return c.name == tc.column })
			ch, err := steps[tc.step](fixture(columns[i].stored, tc.otp), columns[i].now())
			if err != nil || len(ch.Events) == 0 {
				t.Fatalf("%v %v", err, ch.Events)
			}
			if got := ch.Events[0].Data[tc.key]; !reflect.DeepEqual(got, tc.value) {
				t.Errorf("%s = %v, want %v", tc.key, got, tc.value)
			}
		})
	}
}

// OTP outcomes on an opened session requiring OTP: every failed try is an event to keep.
func TestDeliveryOTPOutcomes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		set    func(o *otp.State)
		code   string   // submitted code's hash ("h" is right)
		events []string // recorded
		answer string   // "<status> <code>" the route answers with
	}{
		{"a wrong code", func(*otp.State) {}, "x", []string{EvOTPFailed}, "400 otp_invalid"},
		{"the fifth wrong code locks it", func(o *otp.State) { o.Attempts = otp.MaxAttempts - 1 }, "x",
			[]string{EvOTPFailed, EvOTPLocked}, "400 otp_locked"},
		{"a try on a locked code", func(o *otp.State) { o.Attempts, o.CodeHash, o.Locks = otp.MaxAttempts, "", 1 }, "h",
			[]string{EvOTPFailed}, "400 otp_locked"},
		{"a code past its ten minutes", func(o *otp.State) { o.SentAt, o.ExpiresAt = dNow.Add(-otp.TTL), dNow }, "h",
			[]string{EvOTPFailed}, "400 otp_expired"},
		// The spec's 400 for a verify after the maximum attempts holds after the third locked
		// code too: 400 otp_blocked until the block has run its time (DESIGN 14).
		{"the wrong code that locks a third code", func(o *otp.State) { o.Attempts, o.Locks = otp.MaxAttempts-1, otp.MaxLocks-1 }, "x",
			[]string{EvOTPFailed, EvOTPLocked, EvOTPBlocked}, "400 otp_blocked"},
		{"a try once a block has run its time", func(o *otp.State) {
			o.Attempts, o.CodeHash, o.Locks, o.Blocked, o.BlockedAt = otp.MaxAttempts, "", otp.MaxLocks, true, dNow.Add(-otp.DefaultBlock)
		}, "h",
			[]string{EvOTPFailed}, "400 otp_expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := fixture(StateOpened, otpWaiting)
			tc.set(&s.OTP)
			ch, out, err := VerifyOTP(s, dNow, func(h string) bool { return h == tc.code }, 0)
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			answer := out.Err(&s.OTP, 0)
			if got := fmt.Sprintf("%d %s", apperr.KindOf(answer).Status(), code(answer)); got != tc.answer {
				t.Errorf("answer %s, want %s", got, tc.answer)
			}
			if got := eventKinds(ch); !slices.Equal(got, tc.events) {
				t.Errorf("events %v, want %v", got, tc.events)
			}
			if s.OTPVerified() || s.State != StateOpened {
				t.Errorf("verified %v state %s", s.OTPVerified(), s.State)
			}
		})
	}
}

// Edges the matrix does not reach: the expiry instant, the 60-second send interval and the
// first-time stamps.
func TestDeliveryEdges(t *testing.T) {
	t.Parallel()
	end := t0.Add(time.Hour)
	if _, err := Open(fixture(StateOpened, otpOff), end); code(err) != "delivery_expired" {
		t.Errorf("open at expiresAt: %v", err)
	}
	if _, err := Open(fixture(StateOpened, otpOff), end.Add(-time.Nanosecond)); err != nil {
		t.Errorf("open a nanosecond before expiresAt: %v", err)
	}
	s := fixture(StateOpened, otpWaiting)
	s.OTP.SentAt = dNow.Add(-otp.SendInterval + time.Second)
	if _, err := SendOTP(s, dNow, "h2", "m2", 0); code(err) != "otp_rate_limited" || apperr.KindOf(err).Status() != 429 {
		t.Errorf("send within 60 s: %v", err)
	}
	s.OTP.SentAt = dNow.Add(-otp.SendInterval)
	if _, err := SendOTP(s, dNow, "h2", "m2", 0); err != nil {
		t.Errorf("send at 60 s: %v", err)
	}

	s = fixture(StateOpened, otpOff)
	if _, err := Open(s, dNow); err != nil || !s.OpenedAt.Equal(t0.Add(time.Minute)) || s.ViewCount != 2 {
		t.Errorf("second open: %v openedAt %v views %d", err, s.OpenedAt, s.ViewCount)
	}
	s = fixture(StateSent, otpPassed)
	if _, err := Download(s, dNow); err != nil || !s.DownloadedAt.Equal(dNow) {
		t.Errorf("download from sent: %v downloadedAt %v", err, s.DownloadedAt)
	}
	s = fixture(StateDownloaded, otpOff)
	if Revoke(s, dNow); !s.RevokedAt.Equal(dNow) {
		t.Errorf("revokedAt %v", s.RevokedAt)
	}
	if Revoke(s, dNow.Add(time.Minute)); !s.RevokedAt.Equal(dNow) {
		t.Errorf("a second revoke moved revokedAt to %v", s.RevokedAt)
	}
	s = fixture(StateSent, otpOff)
	if _, err := Invited(s, dNow, "email"); err != nil || !s.SentAt.Equal(t0) {
		t.Errorf("invited again: %v sentAt %v", err, s.SentAt)
	}
	s.UploadState, s.UploadError = UploadFailed, "graph_forbidden"
	if Uploaded(s, dNow, "https://x", "i", "n"); s.UploadError != "" || s.UploadWebURL != "https://x" || s.UploadItemID != "i" {
		t.Errorf("upload after a failure: %q %q %q", s.UploadError, s.UploadWebURL, s.UploadItemID)
	}
}

// Start is the one transition from no state: sent, upload pending only for the library modes,
// and delivery.created without the recipient's address.
func TestDeliveryStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode   Mode
		upload UploadState
	}{
		{ModeSecureEmail, UploadNotAsked},
		{ModeSharePoint, UploadPending},
		{ModeBoth, UploadPending},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			t.Parallel()
			s := &Session{DeliveryID: "d1", Mode: tc.mode, RecipientHash: "rh", RecipientEnc: "enc", RequireOTP: true,
				ExpiresAt: t0.Add(time.Hour)}
			ch := Start(s, t0)
			if s.State != StateSent || s.UploadState != tc.upload || !s.CreatedAt.Equal(t0) {
				t.Errorf("state %s upload %q createdAt %v", s.State, s.UploadState, s.CreatedAt)
			}
			if len(ch.Events) != 1 || ch.Events[0].Kind != EvCreated {
				t.Fatalf("events %+v", ch.Events)
			}
			d := ch.Events[0].Data
			if d["mode"] != string(tc.mode) || d["requireOtp"] != true || d["expiresAt"] != stamp(t0.Add(time.Hour)) {
				t.Errorf("data %v", d)
			}
			for k, v := range d {
				if v == "rh" || v == "enc" {
					t.Errorf("the recipient's address is in the event (%s)", k)
				}
			}
		})
	}
}
