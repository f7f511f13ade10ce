package esign

import (
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
)

// Audit event kinds (DESIGN section 5).
const (
	EvSessionCreated    = "session.created"
	EvSlotInvited       = "slot.invited"
	EvSlotActivated     = "slot.activated"
	EvSlotViewed        = "slot.viewed"
	EvSlotConsented     = "slot.consented"
	EvSlotSigned        = "slot.signed"
	EvSlotDeclined      = "slot.declined"
	EvSlotExpired       = "slot.expired"
	EvSlotReinvited     = "slot.reinvited"
	EvSlotReminded      = "slot.reminded"
	EvSessionInProgress = "session.in_progress"
	EvSessionSealing    = "session.sealing"
	EvSessionCompleted  = "session.completed"
	EvSessionCancelled  = "session.cancelled"
	EvSessionExpired    = "session.expired"
	EvSealFailed        = "seal.failed"
	EvPIIPurged         = "pii.purged"
	EvPIIErased         = "pii.erased"
)

// The event, actor, effect and change of a transition are the kernel's (shared by every
// aggregate); the names stay here so that callers read esign.Change, esign.Actor.
type (
	Event      = kernel.Event
	Actor      = kernel.Actor
	EffectKind = kernel.EffectKind
	Effect     = kernel.Effect
	Change     = kernel.Change
)

// Effects of the signing machine; the apps' effect interpreters know each of them.
const (
	EffectInvite       EffectKind = "invite"        // send slot Slot its invitation
	EffectSeal         EffectKind = "seal"          // enqueue the seal message
	EffectSignerNotice EffectKind = "signer_notice" // requester: slot Slot completed (gated)
	EffectDeclined     EffectKind = "decline_notice"
	EffectRevoked      EffectKind = "revoke_notice"
)

// Errors of the state machine.
var (
	ErrSessionExpired   = &apperr.Error{Kind: apperr.KindGone, Code: "session_expired", Detail: "the signing session has expired"}
	ErrSessionCancelled = &apperr.Error{Kind: apperr.KindGone, Code: "session_cancelled", Detail: "the signing session was cancelled"}
	ErrSessionClosed    = &apperr.Error{Kind: apperr.KindConflict, Code: "session_not_live", Detail: "the signing session no longer accepts signer actions"}
	ErrSlotNotOpen      = &apperr.Error{Kind: apperr.KindConflict, Code: "slot_not_open", Detail: "this slot no longer accepts signer actions"}
	ErrSlotNotInvited   = &apperr.Error{Kind: apperr.KindConflict, Code: "slot_not_yet_open", Detail: "in sequential mode this signer's turn has not come yet"}
	ErrSlotWrongState   = &apperr.Error{Kind: apperr.KindConflict, Code: "slot_wrong_state", Detail: "the slot is not in a state that allows this step"}
	ErrNoSuchSlot       = &apperr.Error{Kind: apperr.KindNotFound, Code: "slot_not_found", Detail: "no such slot"}
	// ErrNotViewed: consent and signing follow the review of the document (the timeline is
	// pending, activated, viewed, signed, with or without OTP).
	ErrNotViewed = &apperr.Error{Kind: apperr.KindConflict, Code: "not_viewed", Detail: "the signer has not viewed the document yet"}
)

// CheckLive is the gate of every signer-facing action: a session past its expiry or cancelled
// is gone (410), one sealing or complete no longer takes signer actions (409).
func CheckLive(s *Session, now time.Time) error {
	switch {
	case s.State == SessionExpired || (s.State.Live() && s.Expired(now)):
		return ErrSessionExpired
	case s.State == SessionCancelled:
		return ErrSessionCancelled
	case !s.State.Live():
		return ErrSessionClosed
	}
	return nil
}

func slotAt(slots []Slot, i int) (*Slot, error) {
	if i < 0 || i >= len(slots) || slots[i].Index != i {
		return nil, ErrNoSuchSlot
	}
	return &slots[i], nil
}

func (sl *Slot) enter(st SlotState, at time.Time) {
	sl.State = st
	if sl.Timeline == nil {
		sl.Timeline = map[SlotState]time.Time{}
	}
	if _, done := sl.Timeline[st]; !done {
		sl.Timeline[st] = at
	}
}

// Start is the change of a newly created session: session.created, the slots' pending state,
// and the first invitations (every slot for single and parallel, slot 0 for sequential).
func Start(s *Session, slots []Slot, now time.Time) Change {
	var c Change
	c.Record(EvSessionCreated, -1, now, map[string]any{
		"signingMode": string(s.SigningMode), "signers": len(slots), "expiresAt": s.ExpiresAt.UTC().Format(time.RFC3339Nano),
		"pdfHash": s.PDFHash, "documentId": s.DocumentID,
	})
	for i := range slots {
		slots[i].enter(SlotPending, now)
		c.Touch(i)
	}
	for _, i := range firstInvites(s, slots) {
		invite(&c, slots, i, now)
	}
	return c
}

func firstInvites(s *Session, slots []Slot) []int {
	if s.SigningMode == ModeSequential {
		return []int{0}
	}
	all := make([]int, len(slots))
	for i := range slots {
		all[i] = i
	}
	return all
}

func invite(c *Change, slots []Slot, i int, now time.Time) {
	slots[i].Invited = true
	if slots[i].InvitedAt.IsZero() {
		slots[i].InvitedAt = now
	}
	c.Touch(i)
	c.Record(EvSlotInvited, i, now, map[string]any{"emailHash": slots[i].EmailHash, "role": slots[i].Role})
	c.Effects = append(c.Effects, Effect{Kind: EffectInvite, Slot: i})
}

// Activate records that slot i's signer opened the portal link: the slot goes to activated (the
// first time), the session from pending to in_progress. A second activation through a fresh link
// (resend-invite) keeps the slot's state and records the event again.
func Activate(s *Session, slots []Slot, i int, now time.Time, meta map[string]any) (Change, error) {
	var c Change
	if err := CheckLive(s, now); err != nil {
		return c, err
	}
	sl, err := slotAt(slots, i)
	if err != nil {
		return c, err
	}
	if !sl.State.Open() {
		return c, ErrSlotNotOpen
	}
	if !sl.Invited {
		return c, ErrSlotNotInvited
	}
	if sl.State == SlotPending {
		sl.enter(SlotActivated, now)
	}
	c.Touch(i)
	c.Record(EvSlotActivated, i, now, meta)
	if s.State == SessionPending {
		s.State = SessionInProgress
		c.Record(EvSessionInProgress, -1, now, nil)
	}
	return c, nil
}

// MarkViewed records that the signer opened and scrolled through the document.
func MarkViewed(s *Session, slots []Slot, i int, now time.Time, meta map[string]any) (Change, error) {
	var c Change
	sl, err := openSlot(s, slots, i, now)
	if err != nil {
		return c, err
	}
	if sl.State == SlotPending {
		return c, ErrSlotWrongState
	}
	if sl.NeedsOTP() {
		return c, ErrOTPRequired
	}
	if sl.State == SlotActivated || sl.State == SlotOTPVerified {
		sl.enter(SlotViewed, now)
	}
	c.Touch(i)
	c.Record(EvSlotViewed, i, now, meta)
	return c, nil
}

func openSlot(s *Session, slots []Slot, i int, now time.Time) (*Slot, error) {
	if err := CheckLive(s, now); err != nil {
		return nil, err
	}
	sl, err := slotAt(slots, i)
	if err != nil {
		return nil, err
	}
	if !sl.State.Open() {
		return nil, ErrSlotNotOpen
	}
	return sl, nil
}

// RequiresOTP reports whether the slot (on its current device) must pass OTP before the
// document and signing.
func (sl *Slot) RequiresOTP() bool { return sl.EffectiveOTPChannel() != OTPNone }

// SignInput is what the validated callback says about the signature.
type SignInput struct {
	SignerName string
	IP         string
	UserAgent  string
	Meta       map[string]any // fields summary, consent version; no personal data but IP/UA
}

// Sign completes slot i, once its signer viewed the document (409 not_viewed) and accepted every
// consent statement. When every required slot is then signed the session goes to sealing
// and the seal is enqueued; in sequential mode the next open slot is invited.
func Sign(s *Session, slots []Slot, i int, now time.Time, in SignInput) (Change, error) {
	var c Change
	sl, err := openSlot(s, slots, i, now)
	if err != nil {
		return c, err
	}
	if err := reviewed(sl); err != nil {
		return c, err
	}
	if missing := missingConsents(sl); missing != "" {
		return c, &apperr.Error{Kind: apperr.KindConflict, Code: "consent_required",
			Detail: "the signer has not accepted the consent statement " + missing}
	}
	sl.enter(SlotSigned, now)
	sl.SignerName, sl.IP, sl.UserAgent = in.SignerName, in.IP, in.UserAgent
	c.Touch(i)
	data := map[string]any{"ip": in.IP, "userAgent": in.UserAgent, "emailHash": sl.EmailHash}
	for k, v := range in.Meta {
		data[k] = v
	}
	c.Record(EvSlotSigned, i, now, data)
	c.Effects = append(c.Effects, Effect{Kind: EffectSignerNotice, Slot: i})
	afterSlotClosed(s, slots, i, now, &c)
	return c, nil
}

// Decline records that slot i's signer declined, with the reason when one was given (clean text:
// the caller validates it; e-mail addresses and phone numbers in it are removed), as evidence for
// the certificate. A declined required slot ends the
// session as cancelled (reason declined, no seal); a declined optional slot is only recorded (and
// in sequential mode the next signer is invited).
func Decline(s *Session, slots []Slot, i int, now time.Time, reason string, meta map[string]any) (Change, error) {
	var c Change
	sl, err := openSlot(s, slots, i, now)
	if err != nil {
		return c, err
	}
	if sl.State == SlotPending {
		return c, ErrSlotWrongState
	}
	if sl.Transferred() && sl.NeedsOTP() { // a device that took the slot over acts only after its OTP
		return c, ErrOTPRequired
	}
	sl.enter(SlotDeclined, now)
	c.Touch(i)
	data := map[string]any{"reasonGiven": reason != ""}
	if reason != "" {
		data["reason"] = RedactContacts(reason) // evidence keeps the reason, never contact details
	}
	for k, v := range meta {
		data[k] = v
	}
	c.Record(EvSlotDeclined, i, now, data)
	c.Effects = append(c.Effects, Effect{Kind: EffectDeclined, Slot: i})
	if sl.Condition == Required {
		s.State, s.CancelReason = SessionCancelled, ReasonDeclined
		c.Record(EvSessionCancelled, -1, now, map[string]any{"reason": string(ReasonDeclined), "slot": i})
		return c, nil
	}
	afterSlotClosed(s, slots, i, now, &c)
	return c, nil
}

// afterSlotClosed moves the session on once slot i is signed or an optional slot declined.
func afterSlotClosed(s *Session, slots []Slot, i int, now time.Time, c *Change) {
	if allRequiredSigned(slots) {
		s.State = SessionSealing
		c.Record(EvSessionSealing, -1, now, nil)
		c.Effects = append(c.Effects, Effect{Kind: EffectSeal, Slot: -1})
		return
	}
	if s.SigningMode == ModeSequential {
		for j := i + 1; j < len(slots); j++ {
			if slots[j].State.Open() && !slots[j].Invited {
				invite(c, slots, j, now)
				return
			}
		}
	}
}

func allRequiredSigned(slots []Slot) bool {
	for _, sl := range slots {
		if sl.Condition != Optional && sl.State != SlotSigned {
			return false
		}
	}
	return true
}

// Expire ends a live session past its expiry: the session and every unsigned open slot become
// expired. It is a no-op change (and no error) for a session that is not live or not yet due.
func Expire(s *Session, slots []Slot, now time.Time) Change {
	var c Change
	if !s.State.Live() || !s.Expired(now) {
		return c
	}
	s.State = SessionExpired
	for i := range slots {
		if slots[i].State.Open() {
			slots[i].enter(SlotExpired, now)
			c.Touch(i)
			c.Record(EvSlotExpired, i, now, nil)
		}
	}
	c.Record(EvSessionExpired, -1, now, map[string]any{"expiresAt": s.ExpiresAt.UTC().Format(time.RFC3339Nano)})
	return c
}

// Cancel ends a live session by the initiator: reason cancelled, or revoked (which also sends the
// revoke notice). Only pending or in_progress sessions can be cancelled (409 otherwise; 410 once
// expired).
func Cancel(s *Session, now time.Time, reason CancelReason, actor string) (Change, error) {
	var c Change
	if s.State == SessionExpired || (s.State.Live() && s.Expired(now)) {
		return c, ErrSessionExpired
	}
	if !s.State.Live() {
		return c, &apperr.Error{Kind: apperr.KindConflict, Code: "session_not_cancellable",
			Detail: "only a pending or in_progress session can be cancelled; this one is " + string(s.State)}
	}
	s.State, s.CancelReason = SessionCancelled, reason
	c.Record(EvSessionCancelled, -1, now, map[string]any{"reason": string(reason), "actor": actor})
	if reason == ReasonRevoked {
		c.Effects = append(c.Effects, Effect{Kind: EffectRevoked, Slot: -1})
	}
	return c, nil
}

// Reinvite checks that slot i may get a fresh invitation (resend-invite): the session is live
// and the slot is activated, viewed or otp_verified. The new link begins the slot's next device
// generation, as a cross-device redeem does: the access tokens issued so far become view-only,
// a cross-device token made before stops working, and a slot with OTP passes it again on the
// new device (a slot without OTP is not asked for one: the link came by the invitation's
// e-mail). The caller issues the new link.
func Reinvite(s *Session, slots []Slot, i int, now time.Time) (Change, error) {
	var c Change
	if err := CheckLive(s, now); err != nil {
		return c, err
	}
	sl, err := slotAt(slots, i)
	if err != nil {
		return c, err
	}
	switch sl.State {
	case SlotActivated, SlotViewed, SlotOTPVerified:
	default:
		return c, ErrSlotWrongState
	}
	resetOTPBlock(sl)
	sl.Generation++
	sl.LinkGeneration = sl.Generation
	c.Touch(i)
	c.Record(EvSlotReinvited, i, now, map[string]any{"emailHash": sl.EmailHash, "generation": sl.Generation})
	c.Effects = append(c.Effects, Effect{Kind: EffectInvite, Slot: i})
	return c, nil
}

// Consent records the signer's acceptance of the named statements (current version), each with
// its verbatim text and acceptance time. The slot must be viewed, with or without OTP: consent
// follows the review of the document (409 not_viewed). Accepting a statement again keeps the
// first acceptance.
func Consent(s *Session, slots []Slot, i int, now time.Time, ids []string) (Change, error) {
	return ConsentIn(s, slots, i, now, ids, "")
}

// ConsentIn is Consent with the statements in the language they were shown in (a supported
// one; "": the slot's locale, else English); the acceptance and its audit event record it.
func ConsentIn(s *Session, slots []Slot, i int, now time.Time, ids []string, lang string) (Change, error) {
	var c Change
	sl, err := openSlot(s, slots, i, now)
	if err != nil {
		return c, err
	}
	if err := reviewed(sl); err != nil {
		return c, err
	}
	for _, id := range ids { // all or nothing: every id is known before any is recorded
		if _, ok := StatementByID(id); !ok {
			return Change{}, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("statements", "unknown consent statement "+id))
		}
	}
	if lang == "" {
		lang = ConsentLanguage(sl, "")
	}
	for _, id := range ids {
		st, _ := statementIn(lang, id)
		if hasConsent(sl, id) {
			continue
		}
		sl.Consents = append(sl.Consents, ConsentAcceptance{ID: st.ID, Version: st.Version, Language: st.Language, Text: st.Text,
			AcceptedAt: now.UTC().Format(time.RFC3339Nano)})
		c.Record(EvSlotConsented, i, now, map[string]any{"statement": st.ID, "version": st.Version, "language": st.Language})
	}
	c.Touch(i)
	return c, nil
}

// reviewed is the gate of consent and signing: a slot never activated has nothing to review
// (409 slot_wrong_state); the current device passes its OTP first (403 otp_required: a device
// that took the slot over acts only after its own); and the document was viewed (409
// not_viewed). A slot stays viewed once viewed (OTP on a later device keeps the state).
func reviewed(sl *Slot) error {
	switch {
	case sl.State == SlotPending:
		return ErrSlotWrongState
	case sl.NeedsOTP():
		return ErrOTPRequired
	case sl.State != SlotViewed:
		return ErrNotViewed
	}
	return nil
}

func hasConsent(sl *Slot, id string) bool {
	for _, a := range sl.Consents {
		if a.ID == id && a.Version == ConsentVersion {
			return true
		}
	}
	return false
}

func missingConsents(sl *Slot) string {
	for _, st := range ConsentStatements {
		if !hasConsent(sl, st.ID) {
			return st.ID
		}
	}
	return ""
}
