package funcproto

import "errors"

// permanentError marks an error that retrying cannot cure.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as one that can never succeed: QueueHandler and TimerHandler record it in
// Logs and acknowledge the message (200, no outputs) instead of asking the host to retry.
// Permanent(nil) is nil. errors.Is and errors.As see through the mark.
func Permanent(err error) error {
	if err == nil || IsPermanent(err) {
		return err
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or any error it wraps, was marked by Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}
