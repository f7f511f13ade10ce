package esign

// The signing state machine as a table, without storage: for every session state (and a live
// session past its expiry) x slot state x OTP setting x transition, the resulting session and
// slot states, the audit events in order, the effects, the touched slots and the error's code.
// The expectations are written from the spec's state tables and DESIGN 5, never by calling the
// machine; a transition that fails must leave session, slots and change untouched.

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/otp"
)

var (
	tNow  = t0.Add(10 * time.Minute) // within the session's life (t0 .. t0+1h)
	tLate = t0.Add(61 * time.Minute) // past it
)

// errKinds is the HTTP class each machine error code must carry (DESIGN 5: 400 validation,
// 401, 403, 404, 409 wrong state, 410 gone, 429).
var errKinds = map[string]apperr.Kind{
	"session_expired":          apperr.KindGone,
	"session_cancelled":        apperr.KindGone,
	"session_not_live":         apperr.KindConflict,
	"session_not_cancellable":  apperr.KindConflict,
	"slot_not_open":            apperr.KindConflict,
	"slot_not_yet_open":        apperr.KindConflict,
	"slot_wrong_state":         apperr.KindConflict,
	"slot_not_found":           apperr.KindNotFound,
	"consent_required":         apperr.KindConflict,
	"not_viewed":               apperr.KindConflict,
	"otp_required":             apperr.KindForbidden,
	"otp_not_required":         apperr.KindInvalid,
	"otp_already_verified":     apperr.KindInvalid,
	"otp_blocked":              apperr.KindInvalid,
	"otp_rate_limited":         apperr.KindRateLimited,
	"otp_invalid":              apperr.KindInvalid,
	"otp_locked":               apperr.KindInvalid,
	"otp_expired":              apperr.KindInvalid,
	"invalid_request":          apperr.KindInvalid,
	"transfer_token_invalid":   apperr.KindUnauthenticated,
	"session_already_complete": apperr.KindConflict,
	"session_not_sealing":      apperr.KindConflict,
	"seal_not_stuck":           apperr.KindConflict,
	"session_live":             apperr.KindConflict,
	"already_erased":           apperr.KindConflict,
}

// ev is an expected audit event: its kind and slot (-1 for the session).
type ev struct {
	Kind string
	Slot int
}

func e(kind string, slot int) ev { return ev{kind, slot} }

func eff(k EffectKind, slot int) Effect { return Effect{Kind: k, Slot: slot} }

// want is the expected outcome of one transition.
type want struct {
	err     string            // apperr code; "" for success
	session SessionState      // "" when unchanged
	reason  CancelReason      // checked when set
	slots   map[int]SlotState // slots whose state changes
	events  []ev
	effects []Effect
	touched []int          // Change.Slots
	outcome string         // VerifyOTP: the code of the outcome's error ("" when passed)
	data    map[string]any // a subset of the first event's data
}

func fail(code string) want { return want{err: code} }

// call runs one transition and returns its change, the code of a VerifyOTP outcome's error
// and the error.
type call func(s *Session, slots []Slot, now time.Time) (Change, string, error)

func only(f func(s *Session, slots []Slot, now time.Time) (Change, error)) call {
	return func(s *Session, slots []Slot, now time.Time) (Change, string, error) {
		c, err := f(s, slots, now)
		return c, "", err
	}
}

func always(f func(s *Session, slots []Slot, now time.Time) Change) call {
	return func(s *Session, slots []Slot, now time.Time) (Change, string, error) {
		return f(s, slots, now), "", nil
	}
}

func errCode(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := apperr.As(err); ok {
		return e.Code
	}
	return "not an apperr: " + err.Error()
}

// run applies c to a fresh fixture from build and checks w.
func run(t *testing.T, build func() (*Session, []Slot), now time.Time, c call, w want) {
	t.Helper()
	s, slots := build()
	s0, slots0 := build()
	ch, outcome, err := c(s, slots, now)
	if got := errCode(err); got != w.err {
		t.Fatalf("error %v, want %q", err, w.err)
	}
	if err != nil {
		if k := errKinds[w.err]; apperr.KindOf(err) != k {
			t.Errorf("error %s has kind %v, want %v", w.err, apperr.KindOf(err), k)
		}
		if len(ch.Slots)+len(ch.Events)+len(ch.Effects) != 0 {
			t.Errorf("a failed transition produced a change: %+v", ch)
		}
		if !reflect.DeepEqual(s, s0) || !reflect.DeepEqual(slots, slots0) {
			t.Errorf("a failed transition changed its input:\nsession %+v\nslots %+v", s, slots)
		}
		return
	}
	wantState := s0.State
	if w.session != "" {
		wantState = w.session
	}
	if s.State != wantState {
		t.Errorf("session %s, want %s", s.State, wantState)
	}
	if w.reason != "" && s.CancelReason != w.reason {
		t.Errorf("cancel reason %q, want %q", s.CancelReason, w.reason)
	}
	for i := range slots {
		want := slots0[i].State
		if st, ok := w.slots[i]; ok {
			want = st
		}
		if slots[i].State != want {
			t.Errorf("slot %d %s, want %s", i, slots[i].State, want)
		}
	}
	var got []ev
	for _, x := range ch.Events {
		got = append(got, ev{x.Kind, x.Slot})
	}
	if !sameList(got, w.events) {
		t.Errorf("events %v, want %v", got, w.events)
	}
	if !sameList(ch.Effects, w.effects) {
		t.Errorf("effects %v, want %v", ch.Effects, w.effects)
	}
	if !sameList(ch.Slots, w.touched) {
		t.Errorf("touched slots %v, want %v", ch.Slots, w.touched)
	}
	if outcome != w.outcome {
		t.Errorf("outcome %q, want %q", outcome, w.outcome)
	}
	for k, v := range w.data {
		if len(ch.Events) == 0 || !reflect.DeepEqual(ch.Events[0].Data[k], v) {
			t.Errorf("first event's %s: got %v, want %v", k, firstData(ch, k), v)
		}
	}
}

func firstData(ch Change, k string) any {
	if len(ch.Events) == 0 {
		return nil
	}
	return ch.Events[0].Data[k]
}

func sameList[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ---- the grid ----

type sessCase struct {
	name  string
	state SessionState
	late  bool // the transition runs at tLate, past the session's expiry
}

var sessCases = []sessCase{
	{"pending", SessionPending, false},
	{"in_progress", SessionInProgress, false},
	{"pending_past_expiry", SessionPending, true},
	{"in_progress_past_expiry", SessionInProgress, true},
	{"sealing", SessionSealing, false},
	{"sealing_past_expiry", SessionSealing, true},
	{"complete", SessionComplete, false},
	{"cancelled", SessionCancelled, false},
	{"expired", SessionExpired, true},
}

var slotStates = []SlotState{SlotPending, SlotActivated, SlotViewed, SlotOTPVerified, SlotSigned, SlotDeclined, SlotExpired}

type cell struct {
	sess sessCase
	slot SlotState
	otp  OTPChannel // OTPNone or OTPEmail
}

func (c cell) now() time.Time {
	if c.sess.late {
		return tLate
	}
	return tNow
}

// live: the session takes signer actions by its state (pending, in_progress).
func (c cell) live() bool {
	return c.sess.state == SessionPending || c.sess.state == SessionInProgress
}

// open: the slot still takes signer actions.
func (c cell) open() bool {
	switch c.slot {
	case SlotPending, SlotActivated, SlotViewed, SlotOTPVerified:
		return true
	}
	return false
}

// verified: with OTP, the slot's state means the code was passed.
func (c cell) verified() bool {
	return c.otp == OTPEmail && (c.slot == SlotOTPVerified || c.slot == SlotViewed || c.slot == SlotSigned)
}

// gate is the signer-facing session gate: a portal link after expiry is 410 (spec Errors), so is
// a cancelled session; one sealing or complete takes no signer actions (409).
func (c cell) gate() string {
	switch {
	case c.sess.state == SessionExpired || (c.live() && c.sess.late):
		return "session_expired"
	case c.sess.state == SessionCancelled:
		return "session_cancelled"
	case !c.live():
		return "session_not_live"
	}
	return ""
}

// signerGate is gate then the slot's: a signed, declined or expired slot takes no action.
func (c cell) signerGate() string {
	if g := c.gate(); g != "" {
		return g
	}
	if !c.open() {
		return "slot_not_open"
	}
	return ""
}

// documentGate is signerGate, then the document's: a slot never activated has nothing to view or
// sign (409), and with OTP the code must be passed first (403).
func (c cell) documentGate() string {
	switch {
	case c.signerGate() != "":
		return c.signerGate()
	case c.slot == SlotPending:
		return "slot_wrong_state"
	case c.otp == OTPEmail && !c.verified():
		return "otp_required"
	}
	return ""
}

// reviewGate is documentGate, then the review's: consent and signing follow the signer's
// viewing of the document, with or without OTP (spec: timeline pending, activated, viewed,
// signed; consent statement "document reviewed"), else 409 not_viewed.
func (c cell) reviewGate() string {
	if g := c.documentGate(); g != "" {
		return g
	}
	if c.slot != SlotViewed {
		return "not_viewed"
	}
	return ""
}

// otpGate is signerGate, then OTP's own (spec, Delivery errors, for the same OTP record): 400
// for a slot without OTP and for one that already passed it.
func (c cell) otpGate() string {
	switch {
	case c.signerGate() != "":
		return c.signerGate()
	case c.otp == OTPNone:
		return "otp_not_required"
	case c.verified():
		return "otp_already_verified"
	}
	return ""
}

// gridFixture is a parallel session of two required slots: slot 0 in the cell's state, slot 1
// invited and pending. With OTP, an activated slot 0 has a live code (hash "h", sent two
// minutes ago) and otp_verified, viewed and signed ones passed it.
func gridFixture(c cell) func() (*Session, []Slot) {
	return func() (*Session, []Slot) {
		s := &Session{GroupID: "g", SigningMode: ModeParallel, State: c.sess.state, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
		sl := Slot{Index: 0, SessionID: "s0", Role: "a", EmailHash: "eh0", EmailEnc: "ee0", Condition: Required,
			OTPChannel: c.otp, State: c.slot, Invited: true, Timeline: map[SlotState]time.Time{SlotPending: t0}}
		if c.otp == OTPEmail {
			switch {
			case c.slot == SlotActivated:
				sl.OTP = OTPState{Channel: "email", Destination: "m", CodeHash: "h",
					SentAt: tNow.Add(-2 * time.Minute), ExpiresAt: tNow.Add(8 * time.Minute)}
			case c.verified():
				sl.OTP = OTPState{Channel: "email", Destination: "m", SentAt: t0, VerifiedAt: t0.Add(time.Minute)}
			}
		}
		other := Slot{Index: 1, SessionID: "s1", Role: "b", EmailHash: "eh1", EmailEnc: "ee1", Condition: Required,
			OTPChannel: OTPNone, State: SlotPending, Invited: true, Timeline: map[SlotState]time.Time{SlotPending: t0}}
		return s, []Slot{sl, other}
	}
}

func consentAll(slots []Slot) { consented(&slots[0]) }

func allStatementIDs() []string {
	return []string{"document_reviewed", "electronic_signature", "legally_binding"}
}

func matchesH(h string) bool { return h == "h" }

type gridEvent struct {
	name   string
	perOTP bool // the outcome depends on the slot's OTP setting
	prep   func(slots []Slot)
	call   call
	want   func(c cell) want
}

var gridEvents = []gridEvent{
	{name: "Activate", call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) { return Activate(s, sl, 0, now, nil) }),
		want: func(c cell) want {
			if g := c.signerGate(); g != "" {
				return fail(g)
			}
			w := want{events: []ev{e(EvSlotActivated, 0)}, touched: []int{0}}
			if c.slot == SlotPending {
				w.slots = map[int]SlotState{0: SlotActivated}
			}
			if c.sess.state == SessionPending { // spec: pending -> in_progress when a signer activates
				w.session = SessionInProgress
				w.events = append(w.events, e(EvSessionInProgress, -1))
			}
			return w
		}},
	{name: "MarkViewed", perOTP: true, call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) { return MarkViewed(s, sl, 0, now, nil) }),
		want: func(c cell) want {
			if g := c.documentGate(); g != "" {
				return fail(g)
			}
			return want{slots: map[int]SlotState{0: SlotViewed}, events: []ev{e(EvSlotViewed, 0)}, touched: []int{0}}
		}},
	{name: "Consent", perOTP: true, call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
		return Consent(s, sl, 0, now, allStatementIDs())
	}),
		want: func(c cell) want {
			if g := c.reviewGate(); g != "" {
				return fail(g)
			}
			return want{events: []ev{e(EvSlotConsented, 0), e(EvSlotConsented, 0), e(EvSlotConsented, 0)}, touched: []int{0},
				data: map[string]any{"statement": "document_reviewed", "version": ConsentVersion}}
		}},
	{name: "Sign", perOTP: true, prep: consentAll, call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
		return Sign(s, sl, 0, now, SignInput{SignerName: "n", IP: "192.0.2.1", UserAgent: "ua"})
	}),
		want: func(c cell) want {
			if g := c.reviewGate(); g != "" { // consents are in place (prep)
				return fail(g)
			}
			// Slot 1 (required) is unsigned: no sealing; parallel: no invitation.
			return want{slots: map[int]SlotState{0: SlotSigned}, events: []ev{e(EvSlotSigned, 0)},
				effects: []Effect{eff(EffectSignerNotice, 0)}, touched: []int{0},
				data: map[string]any{"ip": "192.0.2.1", "userAgent": "ua", "emailHash": "eh0"}}
		}},
	{name: "Decline", call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) { return Decline(s, sl, 0, now, "why", nil) }),
		want: func(c cell) want {
			if g := c.signerGate(); g != "" {
				return fail(g)
			}
			if c.slot == SlotPending {
				return fail("slot_wrong_state")
			}
			// DESIGN 5: a declined required slot cancels the session (reason declined, no seal).
			return want{session: SessionCancelled, reason: ReasonDeclined, slots: map[int]SlotState{0: SlotDeclined},
				events:  []ev{e(EvSlotDeclined, 0), e(EvSessionCancelled, -1)},
				effects: []Effect{eff(EffectDeclined, 0)}, touched: []int{0}, data: map[string]any{"reasonGiven": true, "reason": "why"}}
		}},
	{name: "Reinvite", call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) { return Reinvite(s, sl, 0, now) }),
		want: func(c cell) want {
			if g := c.gate(); g != "" { // spec: not for an expired session
				return fail(g)
			}
			switch c.slot { // spec: only activated, viewed or otp_verified slots
			case SlotActivated, SlotViewed, SlotOTPVerified:
				return want{events: []ev{e(EvSlotReinvited, 0)}, effects: []Effect{eff(EffectInvite, 0)}, touched: []int{0}}
			}
			return fail("slot_wrong_state")
		}},
	{name: "Cancel_cancelled", call: only(func(s *Session, _ []Slot, now time.Time) (Change, error) {
		return Cancel(s, now, ReasonCancelled, "oid")
	}), want: func(c cell) want { return cancelWant(c, ReasonCancelled) }},
	{name: "Cancel_revoked", call: only(func(s *Session, _ []Slot, now time.Time) (Change, error) {
		return Cancel(s, now, ReasonRevoked, "oid")
	}), want: func(c cell) want { return cancelWant(c, ReasonRevoked) }},
	{name: "Expire", call: always(func(s *Session, sl []Slot, now time.Time) Change { return Expire(s, sl, now) }),
		want: func(c cell) want {
			if !c.live() || !c.sess.late { // spec: only pending or in_progress, once the TTL elapsed
				return want{}
			}
			w := want{session: SessionExpired, slots: map[int]SlotState{1: SlotExpired}}
			if c.open() { // DESIGN 5: unsigned slots become expired
				w.slots[0] = SlotExpired
				w.events, w.touched = []ev{e(EvSlotExpired, 0)}, []int{0}
			}
			w.events = append(w.events, e(EvSlotExpired, 1), e(EvSessionExpired, -1))
			w.touched = append(w.touched, 1)
			return w
		}},
	{name: "SendOTP", perOTP: true, call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
		return SendOTP(s, sl, 0, now, "", false, "h2", "m2", 0)
	}),
		want: func(c cell) want {
			if g := c.otpGate(); g != "" {
				return fail(g)
			}
			if c.slot == SlotPending { // a code before the link was opened
				return fail("slot_wrong_state")
			}
			return want{events: []ev{e(EvSlotOTPSent, 0)}, touched: []int{0},
				data: map[string]any{"channel": "email", "destination": "m2", "generation": 0}}
		}},
	{name: "VerifyOTP", perOTP: true, call: func(s *Session, sl []Slot, now time.Time) (Change, string, error) {
		c, out, err := VerifyOTP(s, sl, 0, now, matchesH, 0)
		return c, errCode(out.Err(&sl[0].OTP, 0)), err
	},
		want: func(c cell) want {
			if g := c.otpGate(); g != "" {
				return fail(g)
			}
			if c.slot == SlotPending { // no code was ever sent: a failed try, recorded
				return want{events: []ev{e(EvSlotOTPFailed, 0)}, touched: []int{0}, outcome: "otp_expired",
					data: map[string]any{"reason": "expired"}}
			}
			return want{slots: map[int]SlotState{0: SlotOTPVerified}, events: []ev{e(EvSlotOTPVerified, 0)}, touched: []int{0},
				data: map[string]any{"channel": "email", "destination": "m", "generation": 0}}
		}},
	{name: "UndoOTPSend", call: always(func(s *Session, sl []Slot, now time.Time) Change { return UndoOTPSend(s, sl, 0, now) }),
		want: func(c cell) want {
			// The caller's own failed delivery of a code it just recorded: never refused.
			return want{events: []ev{e(EvSlotOTPSendFailed, 0)}, touched: []int{0}}
		}},
	{name: "CreateTransfer", call: func(s *Session, sl []Slot, now time.Time) (Change, string, error) {
		c, _, err := CreateTransfer(s, sl, 0, now, "th")
		return c, "", err
	},
		want: func(c cell) want {
			if g := c.signerGate(); g != "" {
				return fail(g)
			}
			if c.slot == SlotPending {
				return fail("slot_wrong_state")
			}
			// An audit event only: the transfer row is stored by the caller, the slot is unchanged.
			return want{events: []ev{e(EvSlotTransferCreated, 0)}, data: map[string]any{"generation": 0}}
		}},
	{name: "RedeemTransfer", call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
		return RedeemTransfer(s, sl, Transfer{Hash: "th", Slot: 0, Generation: 0, CreatedAt: tNow.Add(-5 * time.Minute),
			ExpiresAt: tNow.Add(5 * time.Minute)}, now, nil)
	}),
		want: func(c cell) want {
			if c.sess.late { // the token (10 minutes) lapsed long before
				return fail("transfer_token_invalid")
			}
			if g := c.signerGate(); g != "" {
				return fail(g)
			}
			// A new device generation that must pass OTP, by e-mail when the slot had none.
			return want{events: []ev{e(EvSlotTransferRedeemed, 0)}, touched: []int{0},
				data: map[string]any{"generation": 1, "otpChannel": "email"}}
		}},
	{name: "Complete", call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
		return Complete(s, sl, now, "signed/x.pdf", "cert/x.pdf", "evidence/x.jsonl")
	}),
		want: func(c cell) want {
			if g := sealGate(c); g != "" {
				return fail(g)
			}
			w := want{session: SessionComplete, events: []ev{e(EvSessionCompleted, -1)},
				effects: []Effect{eff(EffectDocumentsReady, -1)},
				data:    map[string]any{"signedPath": "signed/x.pdf", "certificatePath": "cert/x.pdf", "evidencePath": "evidence/x.jsonl"}}
			if c.slot == SlotSigned { // the completion notice goes to every signer who signed
				w.effects = append(w.effects, eff(EffectSignerCompleted, 0))
			}
			return w
		}},
	{name: "FailSeal", call: only(func(s *Session, _ []Slot, now time.Time) (Change, error) { return FailSeal(s, now, "tsa down") }),
		want: func(c cell) want {
			if g := sealGate(c); g != "" {
				return fail(g)
			}
			// Stays sealing for an admin re-queue; the requester gets the seal-failure notice.
			return want{events: []ev{e(EvSealFailed, -1)}, effects: []Effect{eff(EffectSealFailure, -1)},
				data: map[string]any{"reason": "tsa down"}}
		}},
	{name: "RequeueSeal_fresh", call: func(s *Session, _ []Slot, now time.Time) (Change, string, error) {
		c, _, err := RequeueSeal(s, now, now.Add(-time.Minute), 0)
		return c, "", err
	},
		want: func(c cell) want {
			if g := sealGate(c); g != "" {
				return fail(g)
			}
			return fail("seal_not_stuck") // no failure recorded, sealing for a minute only
		}},
	{name: "EraseContact", call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) { return EraseContact(s, sl, 0, now) }),
		want: func(c cell) want {
			switch c.sess.state {
			case SessionComplete, SessionCancelled, SessionExpired: // a live session still needs the address
				return want{events: []ev{e(EvPIIErased, 0)}, touched: []int{0}}
			}
			return fail("session_live")
		}},
}

func cancelWant(c cell, reason CancelReason) want {
	switch {
	case c.sess.state == SessionExpired || (c.live() && c.sess.late):
		return fail("session_expired")
	case !c.live(): // spec: only pending or in_progress can be cancelled
		return fail("session_not_cancellable")
	}
	w := want{session: SessionCancelled, reason: reason, events: []ev{e(EvSessionCancelled, -1)},
		data: map[string]any{"reason": string(reason), "actor": "oid"}}
	if reason == ReasonRevoked { // DESIGN 5: revoke also sends the revoke notice
		w.effects = []Effect{eff(EffectRevoked, -1)}
	}
	return w
}

// sealGate: the sealing transitions take a sealing session only (also past its expiry: the TTL
// ends only sessions not yet fully signed); a complete one is a duplicate.
func sealGate(c cell) string {
	switch c.sess.state {
	case SessionSealing:
		return ""
	case SessionComplete:
		return "session_already_complete"
	}
	return "session_not_sealing"
}

func TestTransitionGrid(t *testing.T) {
	t.Parallel()
	for _, ge := range gridEvents {
		t.Run(ge.name, func(t *testing.T) {
			t.Parallel()
			otps := []OTPChannel{OTPNone}
			if ge.perOTP {
				otps = append(otps, OTPEmail)
			}
			for _, sc := range sessCases {
				for _, st := range slotStates {
					for _, o := range otps {
						c := cell{sess: sc, slot: st, otp: o}
						fx := gridFixture(c)
						build := func() (*Session, []Slot) {
							s, slots := fx()
							if ge.prep != nil {
								ge.prep(slots)
							}
							return s, slots
						}
						t.Run(fmt.Sprintf("%s/%s/otp_%s", sc.name, st, o), func(t *testing.T) {
							run(t, build, c.now(), ge.call, ge.want(c))
						})
					}
				}
			}
		})
	}
}

// ---- scenarios: modes, conditions, OTP and transfer details ----

type slotOpt func(*Slot)

func notInvited(sl *Slot) { sl.Invited = false }
func consented(sl *Slot) {
	for _, st := range ConsentStatements {
		sl.Consents = append(sl.Consents, ConsentAcceptance{ID: st.ID, Version: st.Version, Text: st.Text,
			AcceptedAt: t0.Format(time.RFC3339Nano)})
	}
}
func otpBy(ch OTPChannel) slotOpt {
	return func(sl *Slot) { sl.OTPChannel = ch }
}
func passed(gen int) slotOpt { // OTP passed on device generation gen
	return func(sl *Slot) { sl.OTP.VerifiedAt, sl.OTP.VerifiedGen = t0.Add(time.Minute), gen }
}
func generation(n int) slotOpt { return func(sl *Slot) { sl.Generation = n } }
func codeSent(at time.Time) slotOpt { // a live code with hash "h"
	return func(sl *Slot) {
		sl.OTP.Channel, sl.OTP.Destination, sl.OTP.CodeHash, sl.OTP.SentAt, sl.OTP.ExpiresAt = "email", "m", "h", at, at.Add(otp.TTL)
	}
}
func otpTries(attempts, locks int) slotOpt {
	return func(sl *Slot) { sl.OTP.Attempts, sl.OTP.Locks = attempts, locks }
}
func otpBlocked(sl *Slot) {
	sl.OTP.Blocked, sl.OTP.BlockedAt, sl.OTP.Locks = true, tNow.Add(-time.Minute), otp.MaxLocks
}

type slotSpec struct {
	cond Condition
	st   SlotState
	opts []slotOpt
}

func R(st SlotState, opts ...slotOpt) slotSpec { return slotSpec{Required, st, opts} }
func O(st SlotState, opts ...slotOpt) slotSpec { return slotSpec{Optional, st, opts} }

// fx builds a session in state st of the given mode; slots are invited unless notInvited.
func fx(mode SigningMode, st SessionState, specs ...slotSpec) func() (*Session, []Slot) {
	return func() (*Session, []Slot) {
		s := &Session{GroupID: "g", SigningMode: mode, State: st, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
		slots := make([]Slot, len(specs))
		for i, sp := range specs {
			slots[i] = Slot{Index: i, SessionID: fmt.Sprintf("s%d", i), Role: "r", EmailHash: fmt.Sprintf("eh%d", i),
				EmailEnc: "enc", Condition: sp.cond, OTPChannel: OTPNone, State: sp.st, Invited: true,
				Timeline: map[SlotState]time.Time{SlotPending: t0}}
			for _, o := range sp.opts {
				o(&slots[i])
			}
		}
		return s, slots
	}
}

func signAt(i int) call {
	return only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
		return Sign(s, sl, i, now, SignInput{SignerName: "n"})
	})
}

func declineAt(i int) call {
	return only(func(s *Session, sl []Slot, now time.Time) (Change, error) { return Decline(s, sl, i, now, "", nil) })
}

func verifyWith(code string) call {
	return func(s *Session, sl []Slot, now time.Time) (Change, string, error) {
		c, out, err := VerifyOTP(s, sl, 0, now, func(h string) bool { return h == code }, 0)
		return c, errCode(out.Err(&sl[0].OTP, 0)), err
	}
}

func sendPick(pick OTPChannel, hasPhone bool) call {
	return only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
		return SendOTP(s, sl, 0, now, pick, hasPhone, "h2", "m2", 0)
	})
}

type scenario struct {
	name  string
	build func() (*Session, []Slot)
	now   time.Time // tNow when zero
	call  call
	want  want
	check func(t *testing.T, s *Session, slots []Slot)
}

var scenarios = []scenario{
	// Sequential versus parallel: who is invited next.
	{name: "parallel: signing one of two required invites nobody",
		build: fx(ModeParallel, SessionInProgress, R(SlotViewed, consented), R(SlotPending)), call: signAt(0),
		want: want{slots: map[int]SlotState{0: SlotSigned}, events: []ev{e(EvSlotSigned, 0)},
			effects: []Effect{eff(EffectSignerNotice, 0)}, touched: []int{0}}},
	{name: "sequential: signing slot 0 invites slot 1",
		build: fx(ModeSequential, SessionInProgress, R(SlotViewed, consented), R(SlotPending, notInvited), R(SlotPending, notInvited)),
		call:  signAt(0),
		want: want{slots: map[int]SlotState{0: SlotSigned}, events: []ev{e(EvSlotSigned, 0), e(EvSlotInvited, 1)},
			effects: []Effect{eff(EffectSignerNotice, 0), eff(EffectInvite, 1)}, touched: []int{0, 1}},
		check: func(t *testing.T, _ *Session, slots []Slot) {
			if !slots[1].Invited || slots[2].Invited {
				t.Errorf("invited: slot 1 %v, slot 2 %v", slots[1].Invited, slots[2].Invited)
			}
		}},
	{name: "sequential: signing slot 1 invites slot 2",
		build: fx(ModeSequential, SessionInProgress, R(SlotSigned), R(SlotViewed, consented), R(SlotPending, notInvited)),
		call:  signAt(1),
		want: want{slots: map[int]SlotState{1: SlotSigned}, events: []ev{e(EvSlotSigned, 1), e(EvSlotInvited, 2)},
			effects: []Effect{eff(EffectSignerNotice, 1), eff(EffectInvite, 2)}, touched: []int{1, 2}}},
	{name: "sequential: the last required signature seals",
		build: fx(ModeSequential, SessionInProgress, R(SlotSigned), R(SlotSigned), R(SlotViewed, consented)), call: signAt(2),
		want: want{session: SessionSealing, slots: map[int]SlotState{2: SlotSigned},
			events:  []ev{e(EvSlotSigned, 2), e(EvSessionSealing, -1)},
			effects: []Effect{eff(EffectSignerNotice, 2), eff(EffectSeal, -1)}, touched: []int{2}}},
	{name: "parallel: the last required signature seals",
		build: fx(ModeParallel, SessionInProgress, R(SlotSigned), R(SlotViewed, consented)), call: signAt(1),
		want: want{session: SessionSealing, slots: map[int]SlotState{1: SlotSigned},
			events:  []ev{e(EvSlotSigned, 1), e(EvSessionSealing, -1)},
			effects: []Effect{eff(EffectSignerNotice, 1), eff(EffectSeal, -1)}, touched: []int{1}}},
	{name: "single: the one signature seals",
		build: fx(ModeSingle, SessionInProgress, R(SlotViewed, consented)), call: signAt(0),
		want: want{session: SessionSealing, slots: map[int]SlotState{0: SlotSigned},
			events:  []ev{e(EvSlotSigned, 0), e(EvSessionSealing, -1)},
			effects: []Effect{eff(EffectSignerNotice, 0), eff(EffectSeal, -1)}, touched: []int{0}}},
	{name: "sequential: a slot whose turn has not come cannot activate",
		build: fx(ModeSequential, SessionInProgress, R(SlotActivated), R(SlotPending, notInvited)),
		call:  only(func(s *Session, sl []Slot, now time.Time) (Change, error) { return Activate(s, sl, 1, now, nil) }),
		want:  fail("slot_not_yet_open")},
	{name: "no such slot",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated)),
		call:  only(func(s *Session, sl []Slot, now time.Time) (Change, error) { return Activate(s, sl, 3, now, nil) }),
		want:  fail("slot_not_found")},

	// Required versus optional slots.
	{name: "parallel: completion with an optional slot unsigned",
		build: fx(ModeParallel, SessionInProgress, R(SlotViewed, consented), O(SlotPending)), call: signAt(0),
		want: want{session: SessionSealing, slots: map[int]SlotState{0: SlotSigned},
			events:  []ev{e(EvSlotSigned, 0), e(EvSessionSealing, -1)},
			effects: []Effect{eff(EffectSignerNotice, 0), eff(EffectSeal, -1)}, touched: []int{0}}},
	{name: "sequential: completion before a later optional slot's turn does not invite it",
		build: fx(ModeSequential, SessionInProgress, R(SlotViewed, consented), O(SlotPending, notInvited)), call: signAt(0),
		want: want{session: SessionSealing, slots: map[int]SlotState{0: SlotSigned},
			events:  []ev{e(EvSlotSigned, 0), e(EvSessionSealing, -1)},
			effects: []Effect{eff(EffectSignerNotice, 0), eff(EffectSeal, -1)}, touched: []int{0}}},
	{name: "sequential: an optional slot in the middle is invited in its turn",
		build: fx(ModeSequential, SessionInProgress, R(SlotViewed, consented), O(SlotPending, notInvited), R(SlotPending, notInvited)),
		call:  signAt(0),
		want: want{slots: map[int]SlotState{0: SlotSigned}, events: []ev{e(EvSlotSigned, 0), e(EvSlotInvited, 1)},
			effects: []Effect{eff(EffectSignerNotice, 0), eff(EffectInvite, 1)}, touched: []int{0, 1}}},
	{name: "sequential: an optional decline is recorded and invites the next",
		build: fx(ModeSequential, SessionInProgress, R(SlotSigned), O(SlotActivated), R(SlotPending, notInvited)), call: declineAt(1),
		want: want{slots: map[int]SlotState{1: SlotDeclined}, events: []ev{e(EvSlotDeclined, 1), e(EvSlotInvited, 2)},
			effects: []Effect{eff(EffectDeclined, 1), eff(EffectInvite, 2)}, touched: []int{1, 2},
			data: map[string]any{"reasonGiven": false, "reason": nil}}},
	{name: "parallel: an optional decline is only recorded",
		build: fx(ModeParallel, SessionInProgress, R(SlotPending), O(SlotViewed)), call: declineAt(1),
		want: want{slots: map[int]SlotState{1: SlotDeclined}, events: []ev{e(EvSlotDeclined, 1)},
			effects: []Effect{eff(EffectDeclined, 1)}, touched: []int{1}}},
	{name: "parallel: a required decline after another's signature cancels, no seal",
		build: fx(ModeParallel, SessionInProgress, R(SlotSigned), R(SlotViewed)), call: declineAt(1),
		want: want{session: SessionCancelled, reason: ReasonDeclined, slots: map[int]SlotState{1: SlotDeclined},
			events:  []ev{e(EvSlotDeclined, 1), e(EvSessionCancelled, -1)},
			effects: []Effect{eff(EffectDeclined, 1)}, touched: []int{1}}},
	{name: "sequential: a required decline cancels and invites nobody",
		build: fx(ModeSequential, SessionInProgress, R(SlotActivated), R(SlotPending, notInvited)), call: declineAt(0),
		want: want{session: SessionCancelled, reason: ReasonDeclined, slots: map[int]SlotState{0: SlotDeclined},
			events:  []ev{e(EvSlotDeclined, 0), e(EvSessionCancelled, -1)},
			effects: []Effect{eff(EffectDeclined, 0)}, touched: []int{0}}},
	{name: "complete: completion notices only to slots that signed",
		build: fx(ModeParallel, SessionSealing, R(SlotSigned), O(SlotDeclined), R(SlotSigned), O(SlotPending)),
		call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
			return Complete(s, sl, now, "a", "b", "c")
		}),
		want: want{session: SessionComplete, events: []ev{e(EvSessionCompleted, -1)},
			effects: []Effect{eff(EffectDocumentsReady, -1), eff(EffectSignerCompleted, 0), eff(EffectSignerCompleted, 2)}}},
	{name: "expire: signed and declined slots keep their state",
		build: fx(ModeParallel, SessionInProgress, R(SlotSigned), O(SlotDeclined), R(SlotViewed), O(SlotActivated)),
		now:   t0.Add(time.Hour), // exactly at expiresAt
		call:  always(func(s *Session, sl []Slot, now time.Time) Change { return Expire(s, sl, now) }),
		want: want{session: SessionExpired, slots: map[int]SlotState{2: SlotExpired, 3: SlotExpired},
			events: []ev{e(EvSlotExpired, 2), e(EvSlotExpired, 3), e(EvSessionExpired, -1)}, touched: []int{2, 3}}},
	{name: "expire: a nanosecond early is a no-op",
		build: fx(ModeParallel, SessionInProgress, R(SlotViewed)), now: t0.Add(time.Hour - time.Nanosecond),
		call: always(func(s *Session, sl []Slot, now time.Time) Change { return Expire(s, sl, now) }), want: want{}},

	// Consent details.
	{name: "consent: a statement accepted again keeps the first acceptance and records nothing",
		build: fx(ModeSingle, SessionInProgress, R(SlotViewed, consented)),
		call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
			return Consent(s, sl, 0, now, []string{"legally_binding"})
		}),
		want: want{touched: []int{0}},
		check: func(t *testing.T, _ *Session, slots []Slot) {
			if len(slots[0].Consents) != 3 || slots[0].Consents[2].AcceptedAt != t0.Format(time.RFC3339Nano) {
				t.Errorf("consents %+v", slots[0].Consents)
			}
		}},
	{name: "consent: an unknown statement is 400",
		build: fx(ModeSingle, SessionInProgress, R(SlotViewed)),
		call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
			return Consent(s, sl, 0, now, []string{"nope"})
		}),
		want: fail("invalid_request")},
	{name: "consent: an unknown statement after a known one changes nothing",
		build: fx(ModeSingle, SessionInProgress, R(SlotViewed)),
		call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
			return Consent(s, sl, 0, now, []string{"document_reviewed", "nope"})
		}),
		want: fail("invalid_request")},
	{name: "sign: two of three consents is 409",
		build: fx(ModeSingle, SessionInProgress, R(SlotViewed, func(sl *Slot) { consented(sl); sl.Consents = sl.Consents[:2] })),
		call:  signAt(0), want: fail("consent_required")},

	// The OTP gate.
	{name: "otp: signer-choice by sms without a phone number",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated, otpBy(OTPSignerChoice))), call: sendPick(OTPSMS, false),
		want: fail("invalid_request")},
	{name: "otp: signer-choice with no pick",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated, otpBy(OTPSignerChoice))), call: sendPick("", true),
		want: fail("invalid_request")},
	{name: "otp: signer-choice by sms",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated, otpBy(OTPSignerChoice))), call: sendPick(OTPSMS, true),
		want: want{events: []ev{e(EvSlotOTPSent, 0)}, touched: []int{0}, data: map[string]any{"channel": "sms"}}},
	{name: "otp: an sms slot cannot pick e-mail",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated, otpBy(OTPSMS))), call: sendPick(OTPEmail, true),
		want: fail("invalid_request")},
	{name: "otp: a second code within 60 seconds is 429",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated, otpBy(OTPEmail), codeSent(tNow.Add(-30*time.Second)))),
		call:  sendPick("", false), want: fail("otp_rate_limited")},
	{name: "otp: a blocked slot gets no code",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated, otpBy(OTPEmail), otpBlocked)),
		call:  sendPick("", false), want: fail("otp_blocked")},
	{name: "otp: a wrong code",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated, otpBy(OTPEmail), codeSent(tNow.Add(-time.Minute)))),
		call:  verifyWith("x"),
		want: want{events: []ev{e(EvSlotOTPFailed, 0)}, touched: []int{0}, outcome: "otp_invalid",
			data: map[string]any{"reason": "wrong_code", "attempt": 1}}},
	{name: "otp: the fifth wrong code locks it",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated, otpBy(OTPEmail), codeSent(tNow.Add(-time.Minute)), otpTries(4, 0))),
		call:  verifyWith("x"),
		want:  want{events: []ev{e(EvSlotOTPFailed, 0), e(EvSlotOTPLocked, 0)}, touched: []int{0}, outcome: "otp_locked"}},
	{name: "otp: the third locked code blocks the slot",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated, otpBy(OTPEmail), codeSent(tNow.Add(-time.Minute)), otpTries(4, 2))),
		call:  verifyWith("x"),
		want: want{events: []ev{e(EvSlotOTPFailed, 0), e(EvSlotOTPLocked, 0), e(EvSlotOTPBlocked, 0)}, touched: []int{0},
			outcome: "otp_blocked"}},
	{name: "otp: a code past its ten minutes",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated, otpBy(OTPEmail), codeSent(tNow.Add(-otp.TTL)))),
		call:  verifyWith("h"),
		want:  want{events: []ev{e(EvSlotOTPFailed, 0)}, touched: []int{0}, outcome: "otp_expired", data: map[string]any{"reason": "expired"}}},
	{name: "otp: a blocked slot cannot verify",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated, otpBy(OTPEmail), otpBlocked)),
		call:  verifyWith("h"), want: fail("otp_blocked")},
	{name: "otp: resend-invite lifts a block",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated, otpBy(OTPEmail), otpBlocked)),
		call:  only(func(s *Session, sl []Slot, now time.Time) (Change, error) { return Reinvite(s, sl, 0, now) }),
		want:  want{events: []ev{e(EvSlotReinvited, 0)}, effects: []Effect{eff(EffectInvite, 0)}, touched: []int{0}},
		check: func(t *testing.T, _ *Session, slots []Slot) {
			if slots[0].OTP.Blocked || slots[0].OTP.Locks != 0 {
				t.Errorf("otp after reinvite %+v", slots[0].OTP)
			}
		}},

	// Cross-device transfer: the new device must pass OTP again.
	{name: "transfer: the new device of a slot without OTP cannot view before OTP",
		build: fx(ModeSingle, SessionInProgress, R(SlotViewed, generation(1))),
		call:  only(func(s *Session, sl []Slot, now time.Time) (Change, error) { return MarkViewed(s, sl, 0, now, nil) }),
		want:  fail("otp_required")},
	{name: "transfer: the new device cannot sign before OTP",
		build: fx(ModeSingle, SessionInProgress, R(SlotViewed, consented, otpBy(OTPEmail), passed(0), generation(1))),
		call:  signAt(0), want: fail("otp_required")},
	{name: "transfer: the new device of a slot without OTP gets its code by e-mail",
		build: fx(ModeSingle, SessionInProgress, R(SlotViewed, generation(1))), call: sendPick("", false),
		want: want{events: []ev{e(EvSlotOTPSent, 0)}, touched: []int{0}, data: map[string]any{"channel": "email", "generation": 1}}},
	{name: "transfer: passing OTP on the new device keeps the slot viewed",
		build: fx(ModeSingle, SessionInProgress, R(SlotViewed, otpBy(OTPEmail), passed(0), generation(1), codeSent(tNow.Add(-time.Minute)))),
		call:  verifyWith("h"),
		want:  want{events: []ev{e(EvSlotOTPVerified, 0)}, touched: []int{0}, data: map[string]any{"generation": 1}}},
	{name: "transfer: the new device cannot consent before OTP",
		build: fx(ModeSingle, SessionInProgress, R(SlotViewed, generation(1))),
		call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
			return Consent(s, sl, 0, now, allStatementIDs())
		}),
		want: fail("otp_required")},
	{name: "transfer: the new device cannot decline before OTP",
		build: fx(ModeSingle, SessionInProgress, R(SlotViewed, generation(1))), call: declineAt(0),
		want: fail("otp_required")},
	{name: "transfer: a token of an earlier device generation is refused",
		build: fx(ModeSingle, SessionInProgress, R(SlotViewed, generation(1))),
		call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
			return RedeemTransfer(s, sl, Transfer{Slot: 0, Generation: 0, ExpiresAt: now.Add(time.Minute)}, now, nil)
		}),
		want: fail("transfer_token_invalid")},
	{name: "transfer: a token at its expiry is refused",
		build: fx(ModeSingle, SessionInProgress, R(SlotViewed)),
		call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
			return RedeemTransfer(s, sl, Transfer{Slot: 0, Generation: 0, ExpiresAt: now}, now, nil)
		}),
		want: fail("transfer_token_invalid")},
	{name: "transfer: redeeming drops the old device's code, keeps a lock count",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated, otpBy(OTPEmail), codeSent(tNow.Add(-30*time.Second)), otpTries(0, 2))),
		call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) {
			return RedeemTransfer(s, sl, Transfer{Slot: 0, Generation: 0, ExpiresAt: now.Add(time.Minute)}, now,
				map[string]any{"ip": "192.0.2.9"})
		}),
		want: want{events: []ev{e(EvSlotTransferRedeemed, 0)}, touched: []int{0},
			data: map[string]any{"generation": 1, "otpChannel": "email", "ip": "192.0.2.9"}},
		check: func(t *testing.T, _ *Session, slots []Slot) {
			o := slots[0].OTP
			if slots[0].Generation != 1 || o.CodeHash != "" || !o.SentAt.IsZero() || o.Locks != 2 {
				t.Errorf("slot generation %d otp %+v", slots[0].Generation, o)
			}
		}},
	{name: "transfer: a code shown near the session's end lapses with it",
		build: fx(ModeSingle, SessionInProgress, R(SlotActivated)), now: t0.Add(55 * time.Minute),
		call: func(s *Session, sl []Slot, now time.Time) (Change, string, error) {
			c, tr, err := CreateTransfer(s, sl, 0, now, "th")
			if !tr.ExpiresAt.Equal(t0.Add(time.Hour)) || tr.Generation != 0 || tr.Hash != "th" {
				err = fmt.Errorf("transfer %+v, want expiry at the session's", tr)
			}
			return c, "", err
		},
		want: want{events: []ev{e(EvSlotTransferCreated, 0)}}},

	// Sealing: the admin re-queue.
	{name: "requeue: after a recorded failure",
		build: func() (*Session, []Slot) {
			s, sl := fx(ModeSingle, SessionSealing, R(SlotSigned))()
			s.SealError = "tsa down"
			return s, sl
		},
		call: func(s *Session, _ []Slot, now time.Time) (Change, string, error) {
			c, n, err := RequeueSeal(s, now, now.Add(-time.Minute), 2)
			if n != 3 {
				err = fmt.Errorf("attempt %d, want 3", n)
			}
			return c, "", err
		},
		want: want{events: []ev{e(EvSealRequeued, -1)}, data: map[string]any{"attempt": 3, "previousError": "tsa down"}},
		check: func(t *testing.T, s *Session, _ []Slot) {
			if s.SealError != "" {
				t.Errorf("seal error %q kept", s.SealError)
			}
		}},
	{name: "requeue: stuck for the threshold",
		build: fx(ModeSingle, SessionSealing, R(SlotSigned)),
		call: func(s *Session, _ []Slot, now time.Time) (Change, string, error) {
			c, _, err := RequeueSeal(s, now, now.Add(-SealStuckAfter), 0)
			return c, "", err
		},
		want: want{events: []ev{e(EvSealRequeued, -1)}, data: map[string]any{"attempt": 1}}},
	{name: "requeue: unknown sealing time counts as stuck",
		build: fx(ModeSingle, SessionSealing, R(SlotSigned)),
		call: func(s *Session, _ []Slot, now time.Time) (Change, string, error) {
			c, _, err := RequeueSeal(s, now, time.Time{}, 0)
			return c, "", err
		},
		want: want{events: []ev{e(EvSealRequeued, -1)}}},
	{name: "requeue: a minute short of the threshold",
		build: fx(ModeSingle, SessionSealing, R(SlotSigned)),
		call: func(s *Session, _ []Slot, now time.Time) (Change, string, error) {
			c, _, err := RequeueSeal(s, now, now.Add(-SealStuckAfter+time.Minute), 0)
			return c, "", err
		},
		want: fail("seal_not_stuck")},
	{name: "complete clears a recorded seal failure",
		build: func() (*Session, []Slot) {
			s, sl := fx(ModeSingle, SessionSealing, R(SlotSigned))()
			s.SealError = "tsa down"
			return s, sl
		},
		call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) { return Complete(s, sl, now, "a", "b", "c") }),
		want: want{session: SessionComplete, events: []ev{e(EvSessionCompleted, -1)},
			effects: []Effect{eff(EffectDocumentsReady, -1), eff(EffectSignerCompleted, 0)}},
		check: func(t *testing.T, s *Session, _ []Slot) {
			if s.SealError != "" || !s.CompletedAt.Equal(tNow) || s.SignedPath != "a" {
				t.Errorf("session %+v", s)
			}
		}},

	// Erasure.
	{name: "erase: twice is 409",
		build: func() (*Session, []Slot) {
			s, sl := fx(ModeSingle, SessionComplete, R(SlotSigned))()
			sl[0].EmailHash, sl[0].EmailEnc, sl[0].PhoneEnc = "", "", ""
			return s, sl
		},
		call: only(func(s *Session, sl []Slot, now time.Time) (Change, error) { return EraseContact(s, sl, 0, now) }),
		want: fail("already_erased")},
	{name: "erase: removes hash, encrypted address and phone",
		build: fx(ModeSingle, SessionExpired, R(SlotExpired, func(sl *Slot) { sl.PhoneEnc = "p" })),
		call:  only(func(s *Session, sl []Slot, now time.Time) (Change, error) { return EraseContact(s, sl, 0, now) }),
		want:  want{events: []ev{e(EvPIIErased, 0)}, touched: []int{0}},
		check: func(t *testing.T, _ *Session, slots []Slot) {
			if slots[0].EmailHash != "" || slots[0].EmailEnc != "" || slots[0].PhoneEnc != "" {
				t.Errorf("slot %+v", slots[0])
			}
		}},
}

func TestTransitionScenarios(t *testing.T) {
	t.Parallel()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			now := sc.now
			if now.IsZero() {
				now = tNow
			}
			run(t, sc.build, now, sc.call, sc.want)
			if sc.check != nil {
				s, slots := sc.build()
				if _, _, err := sc.call(s, slots, now); err == nil {
					sc.check(t, s, slots)
				}
			}
		})
	}
}
