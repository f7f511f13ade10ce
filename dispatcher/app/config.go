// Package app wires the dispatcher: it reads and validates the configuration, builds the
// stores, verifiers and handlers, and returns the one http.Handler the custom-handler process
// serves (invocations by function name, forwarded /api routes, the readiness ping).
package app

import (
	"fmt"
	"github.com/esign-svc/esign/shared/config"
	"net/url"
	"time"

	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/settings"
	"github.com/esign-svc/esign/shared/web"
)

// Config is everything the dispatcher needs, validated.
type Config struct {
	config.Common   // port, storage, key rings, PORTAL_URL, GRAPH_*, the providers
	CallbackSecrets []string
	PortalOrigin    string // CORS origin of the portal
	Auth            auth.Config
	Licence         licence.Settings // LICENCE or LICENCE_FILE, LICENCE_PUBLIC_KEY
	// InviteCheckAfter is INVITE_CHECK_AFTER (Go duration, default 10m, at least 1m): how long
	// after a change that invites its invitation check is due (ReconcileInvitations sends an
	// invitation whose queue output was lost).
	InviteCheckAfter time.Duration
	// TrustedProxyHops is TRUSTED_PROXY_HOPS (0 to 10, default 1: the Functions front end): how
	// many proxies in front of the dispatcher append the address they were called from to
	// X-Forwarded-For. The client address recorded as evidence is the entry the outermost of
	// them appended (web.ClientIPBehind); 0 takes the connection's remote address.
	TrustedProxyHops int
	// AllowSelfApproval is DISPATCH_ALLOW_SELF_APPROVAL (default false): the submitter of a
	// dispatch batch may decide it.
	AllowSelfApproval bool
	// WorkflowAllowSelfApproval is WORKFLOW_ALLOW_SELF_APPROVAL (default false, development
	// only): a workflow's creator may decide it (DESIGN 14; the other duties rules still hold).
	WorkflowAllowSelfApproval bool
	// OTPBlock is OTP_BLOCK_MINUTES (1 to 1440, default 60), as a duration: how long three
	// locked codes block a signer's, recipient's or participant's codes (DESIGN 14); the owner's
	// own link never lifts it early.
	OTPBlock time.Duration
	// CallbackAllowLoopback admits loopback callbackUrls over http (development only).
	CallbackAllowLoopback bool
	Settings              map[string]string // what was read, secrets masked (for the start-up log)
}

// Settings of the dispatcher named in more than one place.
const (
	SettingInviteCheckAfter = "INVITE_CHECK_AFTER" // the delay of the invitation check
	SettingTrustedProxyHops = "TRUSTED_PROXY_HOPS" // the proxies that append to X-Forwarded-For
	// SettingAllowSelfApproval lets a batch's submitter decide it.
	SettingAllowSelfApproval = "DISPATCH_ALLOW_SELF_APPROVAL"
	// SettingWorkflowSelfApproval lets a workflow's creator decide it (development only).
	SettingWorkflowSelfApproval = "WORKFLOW_ALLOW_SELF_APPROVAL"
	// SettingCallbackLoopback admits loopback workflow callbackUrls over http (development): the
	// processor's callback job reads the same setting, so one switch governs the one URL policy.
	SettingCallbackLoopback = "WEBHOOK_ALLOW_LOOPBACK"
	// SettingOTPBlockMinutes is how long three locked codes block an owner's codes.
	SettingOTPBlockMinutes = "OTP_BLOCK_MINUTES"
)

// MaxOTPBlockMinutes bounds OTP_BLOCK_MINUTES (a day).
const MaxOTPBlockMinutes = 1440

// MaxTrustedProxyHops bounds TRUSTED_PROXY_HOPS.
const MaxTrustedProxyHops = 10

// Load reads the configuration through lookup; the error names every setting at fault.
func Load(lookup settings.Lookup) (Config, error) {
	r := settings.NewReader(lookup)
	c := Config{Common: config.Read(r, lookup)}
	var err error
	if v := r.Secret("PORTAL_CALLBACK_SECRETS"); v != "" {
		c.CallbackSecrets, err = callbacksig.ParseSecrets(v)
		r.Check("PORTAL_CALLBACK_SECRETS", err)
	}
	c.PortalOrigin = r.URL("PORTAL_ORIGIN", false)
	if c.PortalOrigin == "" && c.PortalURL != "" {
		u, _ := url.Parse(c.PortalURL)
		c.PortalOrigin = u.Scheme + "://" + u.Host
	}
	c.Auth = auth.Config{
		Issuer:   r.Required("AUTH_ISSUER"),
		Audience: r.Required("AUTH_AUDIENCE"),
		JWKSURL:  r.String("AUTH_JWKS_URL", ""),
		JWKSFile: r.String("AUTH_JWKS_FILE", ""),
	}
	if (c.Auth.JWKSURL == "") == (c.Auth.JWKSFile == "") {
		r.Check("AUTH_JWKS_URL", fmt.Errorf("set exactly one of AUTH_JWKS_URL (Azure) and AUTH_JWKS_FILE (development)"))
	}
	c.Licence = licence.ReadSettings(r)
	c.InviteCheckAfter = r.Duration(SettingInviteCheckAfter, aggstore.DefaultCheckAfter)
	if c.InviteCheckAfter < time.Minute {
		r.Check(SettingInviteCheckAfter, fmt.Errorf("must be at least 1m (the queue delivers the invitation first)"))
	}
	c.TrustedProxyHops = r.Int(SettingTrustedProxyHops, web.DefaultTrustedProxyHops, 0, MaxTrustedProxyHops)
	c.AllowSelfApproval = r.Bool(SettingAllowSelfApproval, false)
	c.WorkflowAllowSelfApproval = r.Bool(SettingWorkflowSelfApproval, false)
	c.CallbackAllowLoopback = r.Bool(SettingCallbackLoopback, false)
	c.OTPBlock = time.Duration(r.Int(SettingOTPBlockMinutes, int(otp.DefaultBlock/time.Minute), 1, MaxOTPBlockMinutes)) * time.Minute
	c.Settings = r.Summary()
	return c, r.Err()
}
