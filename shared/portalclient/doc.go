// Package portalclient is the typed client of the operator's signing portal (DESIGN 1: the
// project ships typed clients for the operator's services). The portal keeps temporary per-slot
// data while a signer works (the signer's name, form progress, the drawn signature in transit);
// once a session is sealed the processor asks the portal to forget it. The portal's API is not
// published; this project defines it as follows, and the service operator implements it:
//
//	POST {PORTAL_API_URL}/v1/purge
//	Content-Type: application/json
//	X-Esign-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>
//	Idempotency-Key: <groupId>:purge
//
//	{"groupId":"…","sessionIds":["…","…"],"reason":"sealed"}
//
// groupId is the signing session; sessionIds are the per-slot sessionIds the portal tracks
// (every slot of the session, signed or not); reason is "sealed". The secret is the shared
// portal secret: the first (current) value of PORTAL_CALLBACK_SECRETS, the same secret the portal
// signs its callbacks with (DESIGN 4), so the portal checks this header with the code the
// dispatcher uses for callbacks (package callbacksig: 300 s tolerance, constant-time compare,
// several secrets for rotation). The Idempotency-Key is the same for every attempt of one
// session's purge, so a retried request is one purge.
//
// Answers: 200, 202 or 204 is done; 404 means the portal holds nothing for the session (already
// purged or expired) and also counts as done. Any other 4xx (and an unexpected 1xx, 2xx or 3xx;
// redirects are not followed) means the portal refused this request: apperr KindInvalid, code
// portal_purge_rejected, permanent. 5xx, 408, 425, 429, transport failures and time-outs are
// KindUnavailable, code portal_unavailable: retry later. One request is bounded by
// DefaultTimeout. Signing, the time-out, redirects and this classification are package
// webhook's, shared with the other signed POSTs the service sends.
//
// The base URL must be https; plain http is accepted only for a loopback host (local stand-ins
// and tests). The client never logs; its errors carry the status only, never a body. The request
// carries no personal data: groupId and sessionIds are random identifiers.
package portalclient
