// Package logging builds the one zerolog JSON logger an app uses and carries it in the context
// with the invocation id and correlation id. Privacy rule: nothing here ever logs a URL path,
// query string, header value or body: paths carry tokens (/api/esign/document/{token}) and bodies
// carry e-mails. Log route patterns and ids only.
package logging

import (
	"context"
	"io"
	"regexp"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

type ctxKey struct{}

// New is the app's logger: JSON lines with app name and engine version.
func New(w io.Writer, app, version string) zerolog.Logger {
	zerolog.TimeFieldFormat = time.RFC3339Nano
	return zerolog.New(w).With().Timestamp().Str("app", app).Str("version", version).Logger()
}

// With stores a logger in the context.
func With(ctx context.Context, l zerolog.Logger) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// From is the context's logger; a disabled logger when none was set (never nil).
func From(ctx context.Context) *zerolog.Logger {
	if l, ok := ctx.Value(ctxKey{}).(zerolog.Logger); ok {
		return &l
	}
	l := zerolog.Nop()
	return &l
}

// WithIDs adds the invocation and correlation ids to the context's logger.
func WithIDs(ctx context.Context, invocationID, correlationID string) context.Context {
	c := From(ctx).With()
	if invocationID != "" {
		c = c.Str("invocationId", invocationID)
	}
	if correlationID != "" {
		// requestId, as the problem body names it: a session's correlationId is another thing.
		c = c.Str("requestId", correlationID)
	}
	ctx = context.WithValue(ctx, correlationKey{}, correlationID)
	return With(ctx, c.Logger())
}

type correlationKey struct{}

// CorrelationID is the correlation id set by WithIDs or the HTTP middleware.
func CorrelationID(ctx context.Context) string {
	s, _ := ctx.Value(correlationKey{}).(string)
	return s
}

var validCorrelation = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// SafeCorrelationID keeps a caller-supplied correlation id only when it is a short plain token
// (it goes into logs and headers); otherwise a new UUID is made.
func SafeCorrelationID(candidate string) string {
	if validCorrelation.MatchString(candidate) {
		return candidate
	}
	return uuid.NewString()
}
