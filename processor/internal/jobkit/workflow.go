package jobkit

import (
	"context"
	"errors"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/workflow"
)

// Loader reads a workflow (workflow.Workflows.Load).
type Loader interface {
	Load(ctx context.Context, id string) (*workflow.Workflow, error)
}

// Workflow reads the workflow a processor job's queue message names, the one way the workflow
// jobs (notify, seal, callback, trigger) read theirs: nil, logged under job and acknowledged,
// when it is gone; funcproto.Permanent for a message without ids (invalid_message) or of another
// tenant (tenant_mismatch); the store's errors (retried).
func Workflow(ctx context.Context, s Loader, job, workflowID, tenantID string) (*workflow.Workflow, error) {
	if workflowID == "" || tenantID == "" {
		return nil, funcproto.Permanent(apperr.Invalid(funcproto.CodeInvalidMessage, apperr.Field("workflowId", "workflowId and tenantId are required")))
	}
	w, err := s.Load(ctx, workflowID)
	if errors.Is(err, workflow.ErrNotFound) {
		funcproto.Logf(ctx, "%s: no workflow %s; message acknowledged", job, workflowID)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if w.Tenant != tenantID {
		return nil, funcproto.TenantMismatch("workflow")
	}
	return w, nil
}
