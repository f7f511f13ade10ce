package tokens

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"
)

// PortalAccessTTL is the sliding lifetime of a portal access token (never beyond the session).
const PortalAccessTTL = 30 * time.Minute

// WorkflowPortalTTL is the lifetime of a workflow portal token; it is re-issued on each valid access.
const WorkflowPortalTTL = 4 * time.Hour

// Slot is the portal slot token embedded in portalUrl: bound to one slot of one session,
// expiring with the session, single use through its ID (jti), which the caller consumes on
// activation.
type Slot struct {
	GroupID   string
	SlotIndex int
	ID        string    // jti; IssueSlot makes a random one when empty
	ExpiresAt time.Time // the session's expiry
}

type slotClaims struct {
	registered
	GroupID   string `json:"gid"`
	SlotIndex int    `json:"slot"`
}

// IssueSlot signs a slot token. It returns the token and the claims as issued (with the jti).
// Errors (plain, they are programming errors): empty group id, negative slot, past expiry.
func (c *Codec) IssueSlot(s Slot) (string, Slot, error) {
	if s.GroupID == "" || s.SlotIndex < 0 {
		return "", Slot{}, errors.New("tokens: slot token needs a group id and a slot index >= 0")
	}
	if s.ID == "" {
		id, err := randomID()
		if err != nil {
			return "", Slot{}, err
		}
		s.ID = id
	}
	cl := slotClaims{registered: registered{ID: s.ID}, GroupID: s.GroupID, SlotIndex: s.SlotIndex}
	tok, err := c.issue(&cl, PurposeSlot, s.ExpiresAt)
	s.ExpiresAt = time.Unix(cl.ExpiresAt, 0).UTC()
	return tok, s, err
}

// VerifySlot checks a slot token. Errors: KindUnauthenticated token_invalid, token_expired,
// token_wrong_kind.
func (c *Codec) VerifySlot(token string) (Slot, error) {
	var cl slotClaims
	if err := c.verify(token, PurposeSlot, &cl); err != nil {
		return Slot{}, err
	}
	if cl.GroupID == "" || cl.ID == "" || cl.SlotIndex < 0 {
		return Slot{}, invalid("the token lacks its claims")
	}
	return Slot{GroupID: cl.GroupID, SlotIndex: cl.SlotIndex, ID: cl.ID,
		ExpiresAt: time.Unix(cl.ExpiresAt, 0).UTC()}, nil
}

// PortalAccess is the token the portal holds after activation. It slides: each IssuePortalAccess
// gives 30 minutes, capped at the session's expiry. SessionID names the portal session (one per
// activation or redeem); DeviceID and Generation let the caller make the tokens of an earlier
// device secondary (view only) after a cross-device redeem.
type PortalAccess struct {
	GroupID          string
	SlotIndex        int
	SessionID        string
	DeviceID         string
	Generation       int
	SessionExpiresAt time.Time // the signing session's expiry; the token never outlives it
	IssuedAt         time.Time // set by Issue/Verify
	ExpiresAt        time.Time // set by Issue/Verify
}

type portalClaims struct {
	registered
	GroupID    string `json:"gid"`
	SlotIndex  int    `json:"slot"`
	SessionID  string `json:"sid"`
	DeviceID   string `json:"dev,omitempty"`
	Generation int    `json:"gen"`
	SessionExp int64  `json:"sxp"`
}

// IssuePortalAccess signs a portal access token valid for PortalAccessTTL from now, capped at
// p.SessionExpiresAt. To slide, verify the current token and issue again from its claims.
// Errors (plain): missing ids, negative slot or generation, session already expired.
func (c *Codec) IssuePortalAccess(p PortalAccess) (string, PortalAccess, error) {
	if p.GroupID == "" || p.SessionID == "" || p.SlotIndex < 0 || p.Generation < 0 {
		return "", PortalAccess{}, errors.New("tokens: portal access token needs group, slot, session id and generation >= 0")
	}
	exp := c.now().Add(PortalAccessTTL)
	if p.SessionExpiresAt.Before(exp) {
		exp = p.SessionExpiresAt
	}
	cl := portalClaims{GroupID: p.GroupID, SlotIndex: p.SlotIndex, SessionID: p.SessionID,
		DeviceID: p.DeviceID, Generation: p.Generation, SessionExp: p.SessionExpiresAt.Unix()}
	tok, err := c.issue(&cl, PurposePortalAccess, exp)
	if err != nil {
		return "", PortalAccess{}, err
	}
	return tok, cl.public(), nil
}

func (cl *portalClaims) public() PortalAccess {
	return PortalAccess{GroupID: cl.GroupID, SlotIndex: cl.SlotIndex, SessionID: cl.SessionID,
		DeviceID: cl.DeviceID, Generation: cl.Generation,
		SessionExpiresAt: time.Unix(cl.SessionExp, 0).UTC(),
		IssuedAt:         time.Unix(cl.IssuedAt, 0).UTC(), ExpiresAt: time.Unix(cl.ExpiresAt, 0).UTC()}
}

// VerifyPortalAccess checks a portal access token. Errors: KindUnauthenticated token_invalid,
// token_expired, token_wrong_kind.
func (c *Codec) VerifyPortalAccess(token string) (PortalAccess, error) {
	var cl portalClaims
	if err := c.verify(token, PurposePortalAccess, &cl); err != nil {
		return PortalAccess{}, err
	}
	if cl.GroupID == "" || cl.SessionID == "" || cl.SlotIndex < 0 || cl.Generation < 0 ||
		cl.SessionExp == 0 || cl.ExpiresAt > cl.SessionExp {
		return PortalAccess{}, invalid("the token lacks its claims")
	}
	return cl.public(), nil
}

// Delivery is the delivery access token `t` of a delivery portalUrl (one delivery session per
// recipient), expiring with the delivery session.
type Delivery struct {
	DeliveryID string
	ExpiresAt  time.Time
	// IssuedAt is the token's iat; zero: now. The create use case passes the time its plan was
	// made, so that a repeated create answers the very same links.
	IssuedAt time.Time
}

type deliveryClaims struct {
	registered
	DeliveryID string `json:"did"`
}

// IssueDelivery signs a delivery access token. Errors (plain): empty id, past expiry.
func (c *Codec) IssueDelivery(d Delivery) (string, error) {
	if d.DeliveryID == "" {
		return "", errors.New("tokens: delivery token needs a delivery id")
	}
	cl := deliveryClaims{DeliveryID: d.DeliveryID}
	if !d.IssuedAt.IsZero() {
		cl.IssuedAt = d.IssuedAt.Unix()
	}
	return c.issue(&cl, PurposeDelivery, d.ExpiresAt)
}

// VerifyDelivery checks a delivery access token. The caller also checks that the deliveryId of
// the route equals the token's. Errors: KindUnauthenticated token_invalid, token_expired,
// token_wrong_kind.
func (c *Codec) VerifyDelivery(token string) (Delivery, error) {
	var cl deliveryClaims
	if err := c.verify(token, PurposeDelivery, &cl); err != nil {
		return Delivery{}, err
	}
	if cl.DeliveryID == "" {
		return Delivery{}, invalid("the token lacks its claims")
	}
	return Delivery{DeliveryID: cl.DeliveryID, ExpiresAt: time.Unix(cl.ExpiresAt, 0).UTC()}, nil
}

// Workflow portal roles.
const (
	RoleParticipant = "participant"
	RoleReviewer    = "reviewer"
)

// WorkflowPortal is the workflow portal token (`pt` in portalUrl, `token` on API calls): 4 hours,
// re-issued on each valid access. Participant identifies the person (participant or reviewer id
// chosen by the workflow package); Role is RoleParticipant or RoleReviewer.
type WorkflowPortal struct {
	WorkflowID  string
	Participant string
	Role        string
	// Gen is the participant link's generation: a token of an older one was replaced by a new
	// invitation (the workflow keeps the current one).
	Gen       int
	IssuedAt  time.Time // set by Issue/Verify
	ExpiresAt time.Time // set by Issue/Verify
}

type workflowClaims struct {
	registered
	WorkflowID  string `json:"wid"`
	Participant string `json:"sub"`
	Role        string `json:"role"`
	Gen         int    `json:"gen,omitempty"`
}

// IssueWorkflowPortal signs a workflow portal token valid for WorkflowPortalTTL.
// Errors (plain): empty ids, unknown role.
func (c *Codec) IssueWorkflowPortal(w WorkflowPortal) (string, WorkflowPortal, error) {
	if w.WorkflowID == "" || w.Participant == "" || (w.Role != RoleParticipant && w.Role != RoleReviewer) {
		return "", WorkflowPortal{}, errors.New("tokens: workflow token needs workflow id, participant and role participant|reviewer")
	}
	cl := workflowClaims{WorkflowID: w.WorkflowID, Participant: w.Participant, Role: w.Role, Gen: w.Gen}
	tok, err := c.issue(&cl, PurposeWorkflowPortal, c.now().Add(WorkflowPortalTTL))
	if err != nil {
		return "", WorkflowPortal{}, err
	}
	w.IssuedAt, w.ExpiresAt = time.Unix(cl.IssuedAt, 0).UTC(), time.Unix(cl.ExpiresAt, 0).UTC()
	return tok, w, nil
}

// VerifyWorkflowPortal checks a workflow portal token. Errors: KindUnauthenticated
// token_invalid, token_expired, token_wrong_kind.
func (c *Codec) VerifyWorkflowPortal(token string) (WorkflowPortal, error) {
	var cl workflowClaims
	if err := c.verify(token, PurposeWorkflowPortal, &cl); err != nil {
		return WorkflowPortal{}, err
	}
	if cl.WorkflowID == "" || cl.Participant == "" || (cl.Role != RoleParticipant && cl.Role != RoleReviewer) {
		return WorkflowPortal{}, invalid("the token lacks its claims")
	}
	return WorkflowPortal{WorkflowID: cl.WorkflowID, Participant: cl.Participant, Role: cl.Role, Gen: cl.Gen,
		IssuedAt: time.Unix(cl.IssuedAt, 0).UTC(), ExpiresAt: time.Unix(cl.ExpiresAt, 0).UTC()}, nil
}

func randomID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
