package deliverystore

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// CreateLease is how long a create's claim on its key, with no outcome recorded, counts as a
// create under way (409 request_in_progress); after it, as a create that died, taken over by the
// next request with the same key.
const CreateLease = 2 * time.Minute

// A create's key has a partition of its own in the index table (kind "dkey", scope the tenant):
// the kernel's claim row (owner: the run under way) and the plan, kept as the key's one member
// row (m-plan) with the run that wrote it last and how that run ended.
const (
	memberPlan = "plan"

	runRunning = "running"
	runFailed  = "failed"
	runDone    = "done"
)

func createKey(tenant, key string) aggstore.Key {
	return aggstore.Key{Kind: "dkey", Scope: tenant, Value: key}
}

// storedPlan is the plan row: the plan, the run that wrote it last and that run's outcome.
type storedPlan struct {
	delivery.Plan
	Runner string
	State  string
}

// BeginCreate claims key (unique in tenant) for a new run (aggstore.Index.Claim with
// CreateLease) and returns the plan to carry out and the run's id. On a key already claimed the
// plan decides: another request's plan (another Hash) is ErrKeyReused; a Done plan is returned
// to be answered; a failed run's plan, or one whose run outlived its lease, is taken over
// (same plan, this run); a run under way is ErrCreateInProgress. A lapsed plan frees the key
// (a new plan, want). Of any number of concurrent calls with one key exactly one gets a plan to
// carry out.
func (s *Store) BeginCreate(ctx context.Context, tenant, key string, want delivery.Plan, now time.Time) (delivery.Plan, string, error) {
	k := createKey(tenant, key)
	run := uuid.NewString()
	var (
		seen    *storedPlan // the plan as the last look at the claim found it
		verdict aggstore.Holding
	)
	holds := func(ctx context.Context, holder string) (aggstore.Holding, error) {
		p, err := s.plan(ctx, k)
		if err != nil {
			return 0, err
		}
		seen, verdict = p, judge(p, holder, want.Hash, now)
		return verdict, nil
	}
	err := s.index.Claim(ctx, k, run, now, CreateLease, holds)
	var taken *aggstore.TakenError
	if errors.As(err, &taken) {
		switch {
		case verdict != aggstore.Held:
			return delivery.Plan{}, "", delivery.ErrCreateInProgress
		case seen.Hash != want.Hash:
			return delivery.Plan{}, "", delivery.ErrKeyReused
		}
		return seen.Plan, "", nil // Done: answer it
	}
	if err != nil {
		return delivery.Plan{}, "", err
	}
	plan := want
	if seen != nil && !seen.Lapsed(now) && seen.Hash == want.Hash && !seen.Done {
		plan = seen.Plan // an earlier run's: carry it out
	}
	if err := s.putPlan(ctx, k, storedPlan{Plan: plan, Runner: run, State: runRunning}); err != nil {
		return delivery.Plan{}, "", err
	}
	return plan, run, nil
}

// judge tells Claim whether holder, the run holding the key, still holds it, from the key's plan
// p (nil: none written yet).
func judge(p *storedPlan, holder, hash string, now time.Time) aggstore.Holding {
	switch {
	case p == nil:
		return aggstore.Missing // holder has not written its plan yet: under way, or died
	case p.Lapsed(now):
		if p.Runner == holder {
			return aggstore.Released // the key is free again
		}
		return aggstore.Missing // holder took the lapsed key over and has not written its plan yet
	case p.Hash != hash:
		return aggstore.Held // another request's key, whoever runs it
	case p.Runner != holder:
		return aggstore.Missing // holder took this plan over and has not recorded itself yet
	case p.State == runDone:
		return aggstore.Held // answered from the plan
	case p.State == runFailed:
		return aggstore.Released // taken over at once
	}
	return aggstore.Missing // under way: young, in progress; beyond the lease, died
}

// FinishCreate records how run ended: the plan Done, or the run failed (a retry takes the plan
// over at once). One upsert; a run that lost its claim to a later one may overwrite the later
// run's record, which then reads as under way until it finishes itself (its sessions are the
// same ones, so nothing is made twice).
func (s *Store) FinishCreate(ctx context.Context, tenant, key, run string, p delivery.Plan) error {
	state := runFailed
	if p.Done {
		state = runDone
	}
	return s.putPlan(ctx, createKey(tenant, key), storedPlan{Plan: p, Runner: run, State: state})
}

func (s *Store) putPlan(ctx context.Context, k aggstore.Key, p storedPlan) error {
	return s.index.AddMember(ctx, k, memberPlan, map[string]any{
		"planId": p.ID, "hash": p.Hash, "createdAtNs": ns(p.CreatedAt), "expiresAtNs": ns(p.ExpiresAt),
		"runner": p.Runner, "state": p.State,
	})
}

// plan reads the key's plan (nil when none is written). Errors: corrupt_plan; the tablestore
// ones.
func (s *Store) plan(ctx context.Context, k aggstore.Key) (*storedPlan, error) {
	rows, err := s.index.Members(ctx, k)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.String("member") != memberPlan {
			continue
		}
		p := &storedPlan{Plan: delivery.Plan{ID: r.String("planId"), Hash: r.String("hash"),
			CreatedAt: at(r.Int64("createdAtNs")), ExpiresAt: at(r.Int64("expiresAtNs"))},
			Runner: r.String("runner"), State: r.String("state")}
		if p.ID == "" || p.Hash == "" || p.Runner == "" {
			return nil, apperr.New(apperr.KindInternal, "corrupt_plan", "the plan of a delivery create is incomplete")
		}
		p.Done = p.State == runDone
		return p, nil
	}
	return nil, nil
}
