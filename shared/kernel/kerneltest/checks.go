// Package kerneltest holds test doubles of the kernel's interfaces.
package kerneltest

import (
	"context"
	"time"

	"github.com/esign-svc/esign/shared/kernel"
)

// Checks is a follow-up schedule in memory (kernel.DueChecks): Due answers Items whatever the
// time, Forget records the ids it was asked to forget, in order.
type Checks struct {
	Items  []kernel.Due
	Forgot []string
}

// Due answers c.Items.
func (c *Checks) Due(context.Context, time.Time, int) ([]kernel.Due, error) { return c.Items, nil }

// Forget records it.ID.
func (c *Checks) Forget(_ context.Context, it kernel.Due) error {
	c.Forgot = append(c.Forgot, it.ID)
	return nil
}
