package esign

import "github.com/esign-svc/esign/shared/apperr"

// Problem codes answered by more than one package.
const (
	// CodeUnknownEffect is the internal problem of an effect interpreter handed an effect kind it
	// does not know.
	CodeUnknownEffect = "unknown_effect"
	// CodeDeviceSecondary refuses a signer action from a device the session moved away from
	// (cross-device transfer): it can only view (409).
	CodeDeviceSecondary = "device_secondary"
)

// UnknownEffect is what an app's effect interpreter returns for a kind it does not know, instead
// of dropping the effect: a transition asked for something nothing carries out, a programming
// error. Kind internal (500; a queue message is retried).
func UnknownEffect(k EffectKind) error {
	return apperr.New(apperr.KindInternal, CodeUnknownEffect, "no interpreter for the effect kind %q", string(k))
}
