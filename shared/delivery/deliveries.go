package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/otp/otpflow"
	"github.com/esign-svc/esign/shared/pii"
)

// SASTTL is the life of a download URL (spec: typically 15 to 30 minutes); never beyond the
// session's expiry.
const SASTTL = 15 * time.Minute

// Errors of the stored sessions (deliverystore answers these).
var (
	// ErrNotFound is an unknown session, and another tenant's: the two cannot be told apart.
	ErrNotFound = &apperr.Error{Kind: apperr.KindNotFound, Code: "delivery_not_found", Detail: "no such delivery session"}
	// ErrInviteSent: the invitation was sent already (its claim is marked sent).
	ErrInviteSent = kernel.ErrNoticeSent
	// ErrInviteInFlight: another worker holds the invitation's claim.
	ErrInviteInFlight = kernel.ErrNoticeInFlight
	// ErrTenantMismatch is a queue message whose tenant is not its session's (the job refuses it
	// for good).
	ErrTenantMismatch = &apperr.Error{Kind: apperr.KindInvalid, Code: "tenant_mismatch", Detail: "the message's tenant is not the delivery's"}
)

// Step is a transition on a freshly loaded session.
type Step func(s *Session) (Change, error)

// Store is what the delivery use cases need of the store (deliverystore.Store).
type Store interface {
	// Load reads a session. Errors: ErrNotFound; the store's.
	Load(ctx context.Context, deliveryID string) (*Session, error)
	// Update loads the session, runs step and stores its change with the audit events in one
	// transaction on the session's ETag (a lost race runs step again). A step error is returned
	// with the session as step left it, and nothing is written; an empty change writes nothing
	// (the stores' one Update shape).
	kernel.Updater[*Session, Step]
	// ListByCorrelation lists the tenant's sessions of a correlationId, oldest first.
	ListByCorrelation(ctx context.Context, tenantID, correlationID string) ([]*Session, error)
	// SendInvite runs send under the session's invitation claim (of two senders one sends):
	// when send fails the claim is given up and send's error returned; otherwise step's change
	// is stored with the claim marked sent (at the time send answered) in one transaction.
	// Errors: ErrInviteSent; ErrInviteInFlight; send's; step's; the store's.
	SendInvite(ctx context.Context, deliveryID string, now time.Time, lease time.Duration, send func() (time.Time, error), step Step) (*Session, Change, error)
	// SendReminder is SendInvite for reminder round (its own claim per round).
	SendReminder(ctx context.Context, deliveryID string, round int, now time.Time, lease time.Duration, send func() (time.Time, error), step Step) (*Session, Change, error)
}

// Blobs is what the download links need of blob storage (blobstore.Store): the session's own
// copy of its document, made on the first link, read through a short-lived URL, deleted on
// revoke.
type Blobs interface {
	ReadURL(ctx context.Context, container, name string, ttl time.Duration) (string, time.Time, error)
	DownloadURL(ctx context.Context, container, name string, ttl time.Duration, filename string) (string, time.Time, error)
	Copy(ctx context.Context, src, dst blobpath.Path) error
	DeleteIfExists(ctx context.Context, container, name string) error
}

// Deliveries is the delivery session's use-case service (issue 23): one method per transition
// and read a route or job makes on a stored session. Each loads the session once, checks the
// tenant (another tenant's session is ErrNotFound, as an unknown one) or the recipient's gate
// (410 once it ended), runs the machine and stores the change with its audit events in one
// transaction. Creating sessions is Creator's.
type Deliveries struct {
	Store    Store
	Blobs    Blobs         // the download copies (recipient links, revoke)
	Cipher   *pii.Cipher   // decrypts the recipient's address (list, OTP)
	OTPBlock time.Duration // how long three locked codes block a recipient (0: otp.DefaultBlock)
	Now      func() time.Time
}

func (u *Deliveries) now() time.Time { return u.Now().UTC() }

// recipient is the address of s's recipient (decrypted; never logged).
func (u *Deliveries) recipient(s *Session) (string, error) {
	return u.Cipher.DecryptString(s.RecipientEnc, pii.AAD(s.DeliveryID, "recipient"))
}

// change runs move on session id once gate (nil: none) let it through, by who, and stores its
// change with the audit events. A gate or move error writes nothing.
func (u *Deliveries) change(ctx context.Context, id string, who Actor, gate func(s *Session) error, move Step) (*Session, error) {
	s, _, err := u.Store.Update(ctx, id, func(s *Session) (Change, error) {
		if gate != nil {
			if err := gate(s); err != nil {
				return Change{}, err
			}
		}
		ch, err := move(s)
		ch.By(who)
		return ch, err
	})
	return s, err
}

// own runs move on one of tenant's sessions (another tenant's is ErrNotFound) and stores it.
func (u *Deliveries) own(ctx context.Context, tenant, id string, who Actor, move Step) (*Session, error) {
	return u.change(ctx, id, who, func(s *Session) error {
		if s.TenantID != tenant {
			return ErrNotFound
		}
		return nil
	}, move)
}

// Listed is a session of a List with its recipient's address.
type Listed struct {
	*Session
	Recipient string
}

// List is tenant's sessions of correlationID, oldest first, with their recipients' addresses
// (for the creator's tenant only). Errors: the store's; a recipient that cannot be decrypted.
func (u *Deliveries) List(ctx context.Context, tenant, correlationID string) ([]Listed, error) {
	sessions, err := u.Store.ListByCorrelation(ctx, tenant, correlationID)
	if err != nil {
		return nil, err
	}
	out := make([]Listed, 0, len(sessions))
	for _, s := range sessions {
		to, err := u.recipient(s)
		if err != nil {
			return nil, err
		}
		out = append(out, Listed{Session: s, Recipient: to})
	}
	return out, nil
}

// Revoke ends one of tenant's sessions for good on behalf of who (revoking again changes
// nothing) and deletes its download copy, so the URLs already issued fail at once. A failed
// delete is returned; revoking again deletes it then. Errors: ErrNotFound; the store's and the
// blobs'.
func (u *Deliveries) Revoke(ctx context.Context, tenant, id string, who Actor) (*Session, error) {
	s, err := u.own(ctx, tenant, id, who, func(s *Session) (Change, error) { return Revoke(s, u.now()), nil })
	if err != nil {
		return nil, err
	}
	return s, u.deleteCopy(ctx, s)
}

// Live is the recipient's session id (its access token verified by the route) while it may be
// used. Errors: ErrNotFound; 410 delivery_expired, delivery_revoked; the store's.
func (u *Deliveries) Live(ctx context.Context, id string) (*Session, error) {
	s, err := u.Store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := CheckLive(s, u.now()); err != nil {
		return nil, err
	}
	return s, nil
}

// Ended is the 410 of session id when it has ended (expired or revoked), else nil: an unknown
// session, or one that could not be read, is nil too (the caller answers its own error). The
// recipient routes use it to answer a token that lapsed with its session.
func (u *Deliveries) Ended(ctx context.Context, id string) error {
	s, err := u.Store.Load(ctx, id)
	if err != nil {
		return nil
	}
	return CheckLive(s, u.now())
}

// act runs a recipient's transition on the live session id (410 once it ended, checked before
// the step runs) by who.
func (u *Deliveries) act(ctx context.Context, id string, who Actor, step Step) (*Session, error) {
	return u.change(ctx, id, who, func(s *Session) error { return CheckLive(s, u.now()) }, step)
}

// Link is a short-lived read URL of a session's document.
type Link struct {
	URL       string
	ExpiresAt time.Time
}

// IssueLink hands the recipient of session id a read URL of the document for SASTTL (never
// beyond the session's expiry) and records delivery.sas_issued {via} by who; the URL is
// returned only once recorded. attachment (via "download") makes the URL's answers carry
// Content-Disposition: attachment with the document's name. The URL points at the session's
// own copy (CopyPath, made by the first link), never at the source: revoke deletes the copy,
// which ends every URL issued. Errors: ErrNotFound; 410 delivery_expired, delivery_revoked,
// document_gone; 403 otp_required; the store's and the blobs'.
func (u *Deliveries) IssueLink(ctx context.Context, id, via string, attachment bool, who Actor) (Link, error) {
	s, err := u.Live(ctx, id)
	if err != nil {
		return Link{}, err
	}
	now := u.now()
	if err := CheckDocument(s, now); err != nil {
		return Link{}, err
	}
	ttl := min(SASTTL, s.ExpiresAt.Sub(now))
	if ttl < time.Second {
		return Link{}, ErrExpired
	}
	link, until, err := u.copyURL(ctx, s, ttl, attachment)
	if err != nil {
		return Link{}, err
	}
	if _, err := u.act(ctx, id, who, func(s *Session) (Change, error) {
		return IssueSAS(s, u.now(), until, via)
	}); err != nil {
		if errors.Is(err, ErrRevoked) { // revoked meanwhile: its delete may have run before the copy
			u.dropCopy(ctx, s)
		}
		return Link{}, err
	}
	return Link{URL: link, ExpiresAt: until}, nil
}

// copyURL is a read URL of the session's copy of its document, copying the source first when
// the copy is not there yet. Errors: 410 document_gone when the source is no longer stored.
func (u *Deliveries) copyURL(ctx context.Context, s *Session, ttl time.Duration, attachment bool) (string, time.Time, error) {
	dst := CopyPath(s)
	readURL := func() (string, time.Time, error) {
		if attachment {
			return u.Blobs.DownloadURL(ctx, dst.Container, dst.Name, ttl, s.DocumentName)
		}
		return u.Blobs.ReadURL(ctx, dst.Container, dst.Name, ttl)
	}
	link, until, err := readURL()
	if apperr.KindOf(err) != apperr.KindNotFound {
		return link, until, err
	}
	src, err := SourceOf(s)
	if err != nil {
		return "", time.Time{}, apperr.Wrap(err, apperr.KindInternal, "bad_stored_path", "the delivery's document path is invalid")
	}
	err = u.Blobs.Copy(ctx, src, dst)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return "", time.Time{}, &apperr.Error{Kind: apperr.KindGone, Code: "document_gone", Detail: "the document is no longer stored", Err: err}
	}
	if err != nil {
		return "", time.Time{}, err
	}
	return readURL()
}

// dropCopy deletes the session's copy of its document, on a context that outlives the
// caller's; a failure is left to the copies' lifecycle rule (infra) and to a repeated revoke.
func (u *Deliveries) dropCopy(ctx context.Context, s *Session) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropTimeout)
	defer cancel()
	_ = u.deleteCopy(ctx, s)
}

// dropTimeout bounds dropCopy.
const dropTimeout = 10 * time.Second

// deleteCopy deletes the session's copy wherever it may lie (CopyPaths).
func (u *Deliveries) deleteCopy(ctx context.Context, s *Session) error {
	for _, c := range CopyPaths(s) {
		if err := u.Blobs.DeleteIfExists(ctx, c.Container, c.Name); err != nil {
			return err
		}
	}
	return nil
}

// Access events of a recipient (POST .../access).
const (
	AccessOpened     = "opened"
	AccessDownloaded = "downloaded"
)

// Access records the recipient's opened (Open) or downloaded (Download) access to session id
// by who; reportedIP, when not empty, is recorded as the event's reportedIp. Errors:
// ErrNotFound; 410; 403 otp_required for a download before the OTP gate opened; the store's.
func (u *Deliveries) Access(ctx context.Context, id, event, reportedIP string, who Actor) error {
	_, err := u.act(ctx, id, who, func(s *Session) (Change, error) {
		var ch Change
		var err error
		if event == AccessOpened {
			ch, err = Open(s, u.now())
		} else {
			ch, err = Download(s, u.now())
		}
		if err == nil && reportedIP != "" {
			ch.Events[0].Data["reportedIp"] = reportedIP
		}
		return ch, err
	})
	return err
}

// RecordOTP stores code (only its keyed hash, bound to the delivery) as the recipient's new code
// of session id by who, and answers where to send it and the stored session (its OTP's expiry).
// Errors: ErrNotFound; 410; SendOTP's (400 otp_not_required, otp_already_verified, otp_blocked;
// 429 otp_rate_limited); the store's.
func (u *Deliveries) RecordOTP(ctx context.Context, id string, code otpflow.Code, who Actor) (otpflow.Target, *Session, error) {
	var to string
	s, err := u.act(ctx, id, who, func(s *Session) (Change, error) {
		if to == "" && s.RequireOTP {
			addr, err := u.recipient(s)
			if err != nil {
				return Change{}, err
			}
			to = addr
		}
		return SendOTP(s, u.now(), code.Hash(s.DeliveryID), pii.MaskEmail(to), u.OTPBlock)
	})
	if err != nil {
		return otpflow.Target{}, nil, err
	}
	return otpflow.Target{Channel: notify.Email, To: to, DocumentName: s.DocumentName, CorrelationID: s.CorrelationID, Locale: s.RecipientLocale}, s, nil
}

// UndoOTP forgets the code of session id whose send failed (reason: the provider's code), so
// the recipient may ask again at once. Errors: ErrNotFound; the store's.
func (u *Deliveries) UndoOTP(ctx context.Context, id, reason string, who Actor) error {
	return u.record(ctx, id, who, func(s *Session, now time.Time) Change { return UndoOTPSend(s, now, reason) })
}

// VerifyOTP checks the recipient's code of session id by who; every attempt is recorded. It
// answers the outcome and the stored OTP state (otp.Outcome.Err tells how to answer a failure).
// Errors: ErrNotFound; 410; VerifyOTP's (400 otp_not_required, otp_already_verified,
// otp_blocked); the store's.
func (u *Deliveries) VerifyOTP(ctx context.Context, id string, code otpflow.Code, who Actor) (otp.Outcome, *otp.State, error) {
	var out otp.Outcome
	s, err := u.act(ctx, id, who, func(s *Session) (Change, error) {
		ch, o, err := VerifyOTP(s, u.now(), code.Matches(s.DeliveryID), u.OTPBlock)
		out = o
		return ch, err
	})
	if err != nil {
		return 0, nil, err
	}
	return out, &s.OTP, nil
}

// ForMessage is the session a queue message names for tenant ("" when the message carries
// none). Errors: ErrNotFound; ErrTenantMismatch; the store's.
func (u *Deliveries) ForMessage(ctx context.Context, tenant, id string) (*Session, error) {
	s, err := u.Store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if tenant != "" && tenant != s.TenantID {
		return nil, ErrTenantMismatch
	}
	return s, nil
}

// record stores the change move makes on session id, by who.
func (u *Deliveries) record(ctx context.Context, id string, who Actor, move func(s *Session, now time.Time) Change) error {
	_, err := u.change(ctx, id, who, nil, func(s *Session) (Change, error) { return move(s, u.now()), nil })
	return err
}

// RecordUpload records the document-library upload of session id by who: its webUrl, item id
// and the name the library gave it (delivery.uploaded). Errors: ErrNotFound; the store's.
func (u *Deliveries) RecordUpload(ctx context.Context, id, webURL, itemID, name string, who Actor) error {
	return u.record(ctx, id, who, func(s *Session, now time.Time) Change { return Uploaded(s, now, webURL, itemID, name) })
}

// RecordUploadFailed records a failed upload of session id by who with the cause's stable code
// and a detail safe to show (delivery.upload_failed). Errors: ErrNotFound; the store's.
func (u *Deliveries) RecordUploadFailed(ctx context.Context, id, code, detail string, attempt int, who Actor) error {
	return u.record(ctx, id, who, func(s *Session, now time.Time) Change { return UploadFailedNow(s, now, code, detail, attempt) })
}

// RecordInviteFailed records an invitation of session id that cannot be sent (code: the
// provider's refusal, or retries_exhausted) by who. Errors: ErrNotFound; the store's.
func (u *Deliveries) RecordInviteFailed(ctx context.Context, id, code string, who Actor) error {
	return u.record(ctx, id, who, func(s *Session, now time.Time) Change { return InviteFailed(s, now, code) })
}

// SendInvite sends session id's invitation once with send (the e-mail, on channel) under its
// claim (lease: how long a claim keeps a second sender off) and records delivery.invited by who
// with the claim marked sent. Errors: ErrInviteSent (sent already); ErrInviteInFlight; send's
// (the claim is given up); Invited's 410 when the session ended meanwhile; the store's.
func (u *Deliveries) SendInvite(ctx context.Context, id string, lease time.Duration, channel string, who Actor, send func() error) (*Session, error) {
	return u.sendOnce(who, send, func(s *Session, at time.Time) (Change, error) { return Invited(s, at, channel) },
		func(sendAt func() (time.Time, error), step Step) (*Session, Change, error) {
			return u.Store.SendInvite(ctx, id, u.now(), lease, sendAt, step)
		})
}

// sendOnce runs send under a notice claim through claim (the store's SendInvite or
// SendReminder) and stores move's change, made at the time send answered, by who.
func (u *Deliveries) sendOnce(who Actor, send func() error, move func(s *Session, at time.Time) (Change, error),
	claim func(sendAt func() (time.Time, error), step Step) (*Session, Change, error)) (*Session, error) {
	var at time.Time
	sendAt := func() (time.Time, error) {
		if err := send(); err != nil {
			return time.Time{}, err
		}
		at = u.now()
		return at, nil
	}
	s, _, err := claim(sendAt, func(s *Session) (Change, error) {
		ch, err := move(s, at)
		ch.By(who)
		return ch, err
	})
	return s, err
}
