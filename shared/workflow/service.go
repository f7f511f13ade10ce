package workflow

import (
	"context"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/pii"
)

// ErrNotFound is a workflow that does not exist, and another tenant's (workflowstore.ErrNotFound
// is this error).
var ErrNotFound = &apperr.Error{Kind: apperr.KindNotFound, Code: "workflow_not_found", Detail: "no such workflow"}

// ErrTurnOver is a reviewer token whose turn is over: its approver decided or was passed, or
// the workflow left pending-approval.
var ErrTurnOver = apperr.New(apperr.KindForbidden, "reviewer_token_spent", "the reviewer token's turn is over: its approver decided or was passed, or the workflow moved on")

// Repo is the workflow store the use cases run on (*workflowstore.Store): Load is one point
// read; Update loads, runs step and writes its change with its audit rows (a step error writes
// nothing); the processor's jobs also read the audit trail and send notices once
// (service_jobs.go).
type Repo interface {
	// Create stores a new workflow after claiming its tenant's correlationId; a correlationId
	// used before returns that workflow and created false, with nothing written.
	Create(ctx context.Context, w *Workflow, ch kernel.Change, now time.Time) (stored *Workflow, created bool, err error)
	Load(ctx context.Context, id string) (*Workflow, error)
	// Update loads the workflow, runs step and stores its change (the stores' one Update shape).
	kernel.Updater[*Workflow, func(*Workflow) (kernel.Change, error)]
	// Events is the workflow's audit trail, oldest first.
	Events(ctx context.Context, id string) ([]audit.Record, error)
	// Record writes audit events that change no state.
	Record(ctx context.Context, id string, events []kernel.Event) error
	// SendNotice claims the workflow's notice key (ErrNoticeSent when it went out before,
	// ErrNoticeInFlight while another worker holds it), runs send and, when send succeeds,
	// marks the key sent with the events send returns in one transaction; a failed send gives
	// the claim back and is returned as is; a claim taken over meanwhile is ErrNoticeInFlight.
	SendNotice(ctx context.Context, x *Workflow, key string, now time.Time, lease time.Duration, send func() ([]kernel.Event, error)) error
}

// Service is the workflow's use cases (DESIGN 10), one method per transition of a route: each
// loads the workflow once (inside the store's conditional update), checks the caller's tenant
// or portal link, loads the schema, runs the machine with its duties rules, stores the change
// with its audit rows and emits its effects. Handlers decode, authorise the caller's role, call
// one method and encode what it returns.
type Workflows struct {
	Store    Repo
	Packages Packages    // the template packages (*template.Loader)
	Blobs    SchemaBlobs // schemaPath reads (*blobstore.Store)
	// Emit queues a stored change's effects (effects.EmitWorkflow).
	Emit func(ctx context.Context, x *Workflow, ch kernel.Change) error
	// EmailHash is the keyed hash of an approver's e-mail (pii.Hasher.Email).
	EmailHash func(email string) string
	// AllowSelfApproval lets a workflow's creator decide it (WORKFLOW_ALLOW_SELF_APPROVAL).
	AllowSelfApproval bool
	Now               func() time.Time
}

// Create stores a workflow built by the machine's Create with its change stamped by who, and queues the
// change's effects (the invitation) when it was created; a correlationId the tenant used before
// returns that workflow and created false, nothing queued.
func (v *Workflows) Create(ctx context.Context, x *Workflow, ch kernel.Change, who kernel.Actor, now time.Time) (*Workflow, bool, error) {
	ch.By(who)
	stored, created, err := v.Store.Create(ctx, x, ch, now)
	if err != nil || !created {
		return stored, created, err
	}
	return stored, true, v.Emit(ctx, stored, ch)
}

// Link is a portal token's claim on a workflow: the participant's link generation, or a
// reviewer's turn.
type Link struct {
	Reviewer bool
	Turn     string // the reviewer token's turn (its participant id)
	Gen      int    // the participant token's link generation
}

// Usable is the check of any route a portal token reads or acts on: a reviewer token only
// while its turn is current (ErrTurnOver), the participant's only on its live link
// (ParticipantLink). The OTP gate is the participant's routes' own.
func (w *Workflow) Usable(l Link) error {
	if l.Reviewer {
		if !w.ReviewerLive(l.Turn) {
			return ErrTurnOver
		}
		return nil
	}
	return w.ParticipantLink(l.Gen)
}

// Caller is a JWT caller deciding a stage: Workflow.Approver, or Service.Admin standing in for
// the stage's named approver with Reason.
type Caller struct {
	Tenant string
	OID    string
	Name   string // the display name kept in the decision, already cleaned
	Email  string
	Admin  bool
	Reason string
}

// Decider is who decides the current stage: a JWT Caller, or else the reviewer token's Turn.
type Decider struct {
	Caller *Caller
	Turn   string
}

// Access is who reaches a workflow: a JWT caller of Tenant (another tenant's workflow is
// ErrNotFound), or a portal token's Link.
type Access struct {
	Tenant string
	Link   *Link
}

func (a Access) check(x *Workflow) error {
	if a.Link != nil {
		return x.Usable(*a.Link)
	}
	if x.Tenant != a.Tenant {
		return ErrNotFound
	}
	return nil
}

func (v *Workflows) now() time.Time { return v.Now().UTC() }

// Read is a workflow the caller may read, with its schema when withSchema (one point read).
// Errors: ErrNotFound (also another tenant's), ErrTurnOver, the link's; the schema's.
func (v *Workflows) Read(ctx context.Context, a Access, id string, withSchema bool) (*Workflow, *Schema, error) {
	x, err := v.Store.Load(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	var s *Schema
	if withSchema && a.Link != nil { // the portal's reads: the schema's errors answer first, as the routes always did
		if s, err = LoadSchema(ctx, v.Packages, v.Blobs, x); err != nil {
			return nil, nil, err
		}
	}
	if err := a.check(x); err != nil {
		return nil, nil, err
	}
	if withSchema && s == nil {
		if s, err = LoadSchema(ctx, v.Packages, v.Blobs, x); err != nil {
			return nil, nil, err
		}
	}
	return x, s, nil
}

// SchemaOf is x's schema (a read route's, after its own checks).
func (v *Workflows) SchemaOf(ctx context.Context, x *Workflow) (*Schema, error) {
	return LoadSchema(ctx, v.Packages, v.Blobs, x)
}

// Move is one transition of the machine on a workflow with its schema.
type Move func(s *Schema, x *Workflow) (kernel.Change, error)

// route is what a transition checks around the machine: access (nil: none, the store's own
// undo), a request body read after a JWT caller's tenant check (before), and whether the move
// needs the schema.
type route struct {
	access *Access
	before func() error
	schema bool
}

// run is every transition's path: one load inside the store's update, a JWT caller's tenant
// check before the schema and a portal link's after it (the order the routes have always
// answered in), the machine, the change stored with its audit rows by who, then its effects
// queued.
func (v *Workflows) run(ctx context.Context, id string, who kernel.Actor, rt route, move Move) (*Workflow, *Schema, error) {
	var s *Schema
	x, ch, err := v.Store.Update(ctx, id, func(x *Workflow) (kernel.Change, error) {
		if rt.access != nil && rt.access.Link == nil {
			if err := rt.access.check(x); err != nil {
				return kernel.Change{}, err
			}
		}
		if rt.before != nil {
			if err := rt.before(); err != nil {
				return kernel.Change{}, err
			}
		}
		if rt.schema {
			var err error
			if s, err = LoadSchema(ctx, v.Packages, v.Blobs, x); err != nil {
				return kernel.Change{}, err
			}
		}
		if rt.access != nil && rt.access.Link != nil {
			if err := rt.access.check(x); err != nil {
				return kernel.Change{}, err
			}
		}
		ch, err := move(s, x)
		ch.By(who)
		return ch, err
	})
	if err != nil {
		return nil, nil, err
	}
	return x, s, v.Emit(ctx, x, ch)
}

// approver is the approver of x's current stage that d names: for a JWT caller, the position
// of the caller's e-mail in the stage's routing sequence (-1 when the stage does not name it:
// only an admin with a reason may then decide, the machine's rule); for a reviewer turn, the
// current approver while the turn is live (ErrTurnOver).
func (v *Workflows) approver(d Decider, s *Schema, x *Workflow) (Approver, error) {
	if c := d.Caller; c != nil {
		by := Approver{Index: -1, OID: c.OID, Name: c.Name, Admin: c.Admin, Reason: c.Reason, AllowSelf: v.AllowSelfApproval}
		if c.Email != "" {
			by.Hash = v.EmailHash(c.Email)
		}
		if x.Stage < len(s.Stages) {
			for i, addr := range s.Stages[x.Stage].Approvers {
				if c.Email != "" && strings.EqualFold(addr, c.Email) {
					by.Index = i
					if i == x.Approver {
						break
					}
				}
			}
		}
		return by, nil
	}
	if !x.ReviewerLive(d.Turn) {
		return Approver{}, ErrTurnOver
	}
	by := Approver{Index: x.Approver, AllowSelf: v.AllowSelfApproval}
	if x.Stage < len(s.Stages) && x.Approver < len(s.Stages[x.Stage].Approvers) {
		by.Hash = v.EmailHash(s.Stages[x.Stage].Approvers[x.Approver])
	}
	return by, nil
}

// decide runs a decision of d on the current stage: a JWT caller's tenant is checked first, a
// reviewer turn's liveness by approver.
func (v *Workflows) decide(ctx context.Context, id string, d Decider, who kernel.Actor, move func(Approver, *Schema, *Workflow) (kernel.Change, error)) (*Workflow, error) {
	a := Access{}
	if d.Caller != nil {
		a.Tenant = d.Caller.Tenant
	} else {
		a.Link = &Link{Reviewer: true, Turn: d.Turn}
	}
	x, _, err := v.run(ctx, id, who, route{access: &a, schema: true}, func(s *Schema, x *Workflow) (kernel.Change, error) {
		by, err := v.approver(d, s, x)
		if err != nil {
			return kernel.Change{}, err
		}
		return move(by, s, x)
	})
	return x, err
}

// Approve passes the current stage (Workflow.Approve): the next stage's approver is notified,
// or after the last the seal is queued.
func (v *Workflows) Approve(ctx context.Context, id string, d Decider, who kernel.Actor, comment string) (*Workflow, error) {
	return v.decide(ctx, id, d, who, func(by Approver, _ *Schema, x *Workflow) (kernel.Change, error) {
		return x.Approve(by, comment, v.now())
	})
}

// Reject ends the workflow as rejected (Workflow.Reject).
func (v *Workflows) Reject(ctx context.Context, id string, d Decider, who kernel.Actor, comment string) (*Workflow, error) {
	return v.decide(ctx, id, d, who, func(by Approver, _ *Schema, x *Workflow) (kernel.Change, error) {
		return x.Reject(by, comment, v.now())
	})
}

// RequestChanges sends the workflow back to the participant (Workflow.RequestChanges).
func (v *Workflows) RequestChanges(ctx context.Context, id string, d Decider, who kernel.Actor, changes []ChangeRequest) (*Workflow, error) {
	return v.decide(ctx, id, d, who, func(by Approver, s *Schema, x *Workflow) (kernel.Change, error) {
		return x.RequestChanges(s, by, changes, v.now())
	})
}

// Governance is a reviewer's governance decision (Workflow.GovernanceDecision).
func (v *Workflows) Governance(ctx context.Context, id, turn string, who kernel.Actor, decision, justification string) (*Workflow, error) {
	return v.decide(ctx, id, Decider{Turn: turn}, who, func(by Approver, _ *Schema, x *Workflow) (kernel.Change, error) {
		return x.GovernanceDecision(by, decision, justification, v.now())
	})
}

// Escalate notifies the current stage's next approver (Workflow.Escalate); body is the
// request's body rule, run after the tenant check.
func (v *Workflows) Escalate(ctx context.Context, tenant, id string, who kernel.Actor, body func() error) (*Workflow, error) {
	x, _, err := v.run(ctx, id, who, route{access: &Access{Tenant: tenant}, before: body, schema: true}, func(s *Schema, x *Workflow) (kernel.Change, error) {
		return x.Escalate(s, v.now())
	})
	return x, err
}

// Cancel ends a live workflow as cancelled (Workflow.Cancel); body as for Escalate.
func (v *Workflows) Cancel(ctx context.Context, tenant, id string, who kernel.Actor, body func() error) (*Workflow, error) {
	x, _, err := v.run(ctx, id, who, route{access: &Access{Tenant: tenant}, before: body, schema: true}, func(_ *Schema, x *Workflow) (kernel.Change, error) {
		return x.Cancel(v.now())
	})
	return x, err
}

// Seal queues the seal (Workflow.Seal); sealer reads the request's body after the tenant check
// and returns who seals.
func (v *Workflows) Seal(ctx context.Context, tenant, id string, who kernel.Actor, sealer func() (Sealer, error)) (*Workflow, error) {
	var by Sealer
	body := func() error {
		var err error
		by, err = sealer()
		return err
	}
	x, _, err := v.run(ctx, id, who, route{access: &Access{Tenant: tenant}, before: body, schema: true}, func(s *Schema, x *Workflow) (kernel.Change, error) {
		return x.Seal(s, by, v.now())
	})
	return x, err
}

// participant runs a participant's move past the link and the OTP gate.
func (v *Workflows) participant(ctx context.Context, id string, l Link, who kernel.Actor, move Move) (*Workflow, *Schema, error) {
	return v.run(ctx, id, who, route{access: &Access{Link: &l}, schema: true}, func(s *Schema, x *Workflow) (kernel.Change, error) {
		if err := x.OTPGate(); err != nil {
			return kernel.Change{}, err
		}
		return move(s, x)
	})
}

// SaveStep stores step i's values (Workflow.SaveStep); it returns the schema for the step's
// fields.
func (v *Workflows) SaveStep(ctx context.Context, id string, l Link, who kernel.Actor, i int, data map[string]any) (*Workflow, *Schema, error) {
	return v.participant(ctx, id, l, who, func(s *Schema, x *Workflow) (kernel.Change, error) {
		return x.SaveStep(s, i, data, v.now())
	})
}

// Advance moves to the next step, or validates all the data on the last (Workflow.Advance).
func (v *Workflows) Advance(ctx context.Context, id string, l Link, who kernel.Actor) (*Workflow, error) {
	x, _, err := v.participant(ctx, id, l, who, func(s *Schema, x *Workflow) (kernel.Change, error) {
		return x.Advance(s, v.now())
	})
	return x, err
}

// FixValidation goes back to the first failing field's step (Workflow.FixValidation).
func (v *Workflows) FixValidation(ctx context.Context, id string, l Link, who kernel.Actor) (*Workflow, error) {
	x, _, err := v.participant(ctx, id, l, who, func(s *Schema, x *Workflow) (kernel.Change, error) {
		return x.FixValidation(s, v.now())
	})
	return x, err
}

// SendOTP records a new code sent to the first recipient (Workflow.SendOTP): hash is the code's
// keyed hash bound to the workflow's id. It returns the workflow and the address to send to.
func (v *Workflows) SendOTP(ctx context.Context, id string, l Link, who kernel.Actor, hash func(workflowID string) string, block time.Duration) (*Workflow, string, error) {
	var to string
	x, _, err := v.run(ctx, id, who, route{access: &Access{Link: &l}}, func(_ *Schema, x *Workflow) (kernel.Change, error) {
		if len(x.Setup.Recipients) > 0 {
			to = x.Setup.Recipients[0].Email
		}
		return x.SendOTP(hash(x.ID), pii.MaskEmail(to), v.now(), block)
	})
	return x, to, err
}

// UndoOTPSend withdraws the code whose e-mail could not be sent (Workflow.UndoOTPSend).
func (v *Workflows) UndoOTPSend(ctx context.Context, id string, who kernel.Actor, reason string) error {
	_, _, err := v.run(ctx, id, who, route{}, func(_ *Schema, x *Workflow) (kernel.Change, error) {
		return x.UndoOTPSend(reason, v.now())
	})
	return err
}

// VerifyOTP records an attempt at the code (Workflow.VerifyOTP): matches is the check of the
// code bound to the workflow's id. It returns the workflow and the attempt's outcome.
func (v *Workflows) VerifyOTP(ctx context.Context, id string, l Link, who kernel.Actor, matches func(workflowID string) func(string) bool, block time.Duration) (*Workflow, otp.Outcome, error) {
	var out otp.Outcome
	x, _, err := v.run(ctx, id, who, route{access: &Access{Link: &l}}, func(_ *Schema, x *Workflow) (kernel.Change, error) {
		ch, o, err := x.VerifyOTP(matches(x.ID), v.now(), block)
		out = o
		return ch, err
	})
	return x, out, err
}

// ResendInvite sends the current approver's e-mail again, or the participant's invitation with
// a new link (Workflow.ResendInvite), for a participant or a reviewer token.
func (v *Workflows) ResendInvite(ctx context.Context, id string, l Link, who kernel.Actor) (*Workflow, error) {
	x, _, err := v.run(ctx, id, who, route{access: &Access{Link: &l}}, func(_ *Schema, x *Workflow) (kernel.Change, error) {
		return x.ResendInvite(v.now())
	})
	return x, err
}
