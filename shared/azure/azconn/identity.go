package azconn

import (
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// ManagedIdentity is the app's managed identity as a token credential: the system-assigned one,
// or the user-assigned one whose client id is clientID. It does no I/O: a missing identity
// shows up on the first token request. Other services than storage (Microsoft Graph) sign in
// with it, so that only this package imports azidentity.
func ManagedIdentity(clientID string) (azcore.TokenCredential, error) {
	opts := &azidentity.ManagedIdentityCredentialOptions{}
	if id := strings.TrimSpace(clientID); id != "" {
		opts.ID = azidentity.ClientID(id)
	}
	return azidentity.NewManagedIdentityCredential(opts)
}
