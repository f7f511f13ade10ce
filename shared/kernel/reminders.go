package kernel

import (
	"fmt"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// ReminderPolicy is a reminders block (DESIGN 17), the same for signing sessions and
// deliveries: the first reminder FirstAfterHours after the invitation, the next ones every
// EveryHours, at most Max.
type ReminderPolicy struct {
	FirstAfterHours int `json:"firstAfterHours"`
	EveryHours      int `json:"everyHours"`
	Max             int `json:"max"`
}

// MaxReminders is the largest max a reminders block may ask for.
const MaxReminders = 10

// Check answers the block's faults, each named under path (the block's full JSON path).
func (p *ReminderPolicy) Check(path string) []apperr.FieldError {
	if p == nil {
		return nil
	}
	var errs []apperr.FieldError
	if p.FirstAfterHours < 1 {
		errs = append(errs, apperr.Field(path+".firstAfterHours", "must be at least 1"))
	}
	if p.EveryHours < 1 {
		errs = append(errs, apperr.Field(path+".everyHours", "must be at least 1"))
	}
	if p.Max < 1 || p.Max > MaxReminders {
		errs = append(errs, apperr.Field(path+".max", fmt.Sprintf("must be from 1 to %d", MaxReminders)))
	}
	return errs
}

// Due is when reminder number count+1 falls under the block: FirstAfterHours after from (the
// invitation) for the first, EveryHours after last (the previous one) for the next; zero when
// p is nil or count reached Max.
func (p *ReminderPolicy) Due(count int, from, last time.Time) time.Time {
	if p == nil || count >= p.Max {
		return time.Time{}
	}
	if count > 0 {
		return last.Add(time.Duration(p.EveryHours) * time.Hour)
	}
	return from.Add(time.Duration(p.FirstAfterHours) * time.Hour)
}
