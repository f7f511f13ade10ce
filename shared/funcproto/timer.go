package funcproto

import "time"

// TimerInfo is a timer trigger's value.
type TimerInfo struct {
	// IsPastDue is true when the invocation runs later than scheduled.
	IsPastDue bool
	// AdjustForDST is Schedule.AdjustForDST.
	AdjustForDST bool
	// Last, Next and LastUpdated are ScheduleStatus (zero when the host sends none).
	Last, Next, LastUpdated time.Time
}

// Timer decodes the timer trigger binding named binding ("" or a missing name with a single
// Data member takes that member). Errors: *apperr.Error KindInvalid code "invalid_invocation".
func (in *InvocationRequest) Timer(binding string) (TimerInfo, error) {
	raw, field, err := in.trigger(binding)
	if err != nil {
		return TimerInfo{}, err
	}
	m, err := objectFields(raw, field)
	if err != nil {
		return TimerInfo{}, err
	}
	var t TimerInfo
	if t.IsPastDue, err = flexBool(member(m, "IsPastDue"), field+".IsPastDue"); err != nil {
		return t, err
	}
	sched, err := objectFields(member(m, "Schedule"), field+".Schedule")
	if err != nil {
		return t, err
	}
	if t.AdjustForDST, err = flexBool(member(sched, "AdjustForDST"), field+".Schedule.AdjustForDST"); err != nil {
		return t, err
	}
	status, err := objectFields(member(m, "ScheduleStatus"), field+".ScheduleStatus")
	if err != nil {
		return t, err
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"Last", &t.Last}, {"Next", &t.Next}, {"LastUpdated", &t.LastUpdated}} {
		if *f.dst, err = flexTime(member(status, f.name), field+".ScheduleStatus."+f.name); err != nil {
			return t, err
		}
	}
	return t, nil
}
