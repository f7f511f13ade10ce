package notify

// Stable error codes a provider's Send returns (in *apperr.Error); the SMTP and ACS senders
// share them.
const (
	// CodeUnavailable: the service could not be reached, timed out, was throttled or answered a
	// transient failure. KindUnavailable (RetryAfter when the service sent one).
	CodeUnavailable = "notify_unavailable"
	// CodeRefused: the service refused the message for good. KindInvalid.
	CodeRefused = "notify_refused"
	// CodeAuthRefused: the service refused our credentials. KindInvalid.
	CodeAuthRefused = "notify_auth_refused"
	// CodeInvalidMessage: the Message itself cannot be sent by this provider. KindInvalid.
	CodeInvalidMessage = "notify_invalid_message"
	// CodeRequest: the request to the service could not be built. KindInternal.
	CodeRequest = "notify_request"
)
