package azconn

import (
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// Account holds one storage account's clients. It is safe for concurrent use; build it once
// in main and share it.
type Account struct {
	name                        string
	blobURL, queueURL, tableURL string
	blob                        *azblob.Client
	tables                      *aztables.ServiceClient
	queues                      *azqueue.ServiceClient
	blobKey                     *service.SharedKeyCredential // nil with a token credential
	token                       azcore.TokenCredential       // nil with a shared key
}

// New validates cfg and builds the clients. It does no I/O (Ping checks reachability). Errors
// name the setting at fault (SettingConnectionString, SettingAccountName, ...) and never
// contain the account key.
func New(cfg Config) (*Account, error) {
	cs, name := strings.TrimSpace(cfg.ConnectionString), strings.TrimSpace(cfg.AccountName)
	switch {
	case cs != "" && name != "":
		return nil, fmt.Errorf("azconn: set either %s or %s, not both", SettingConnectionString, SettingAccountName)
	case cs != "":
		ep, err := parseConnectionString(cs)
		if err != nil {
			return nil, err
		}
		return newWithKey(ep, cfg.ApplicationID)
	case name != "":
		return newWithIdentity(cfg, name)
	default:
		return nil, fmt.Errorf("azconn: storage is not configured: set %s (managed identity) or %s", SettingAccountName, SettingConnectionString)
	}
}

// Storage retries are bounded so that a request during a storage outage is answered (a 5xx)
// within a few seconds instead of waiting out the SDK's defaults (back-off from 800 ms up to 60 s,
// and no limit on one try): retryDelay doubles per retry up to maxRetryDelay (each with jitter),
// and tryTimeout ends one try that hangs. With storage unreachable, a call gives up after about
// 1.5 s (0.2 + 0.4 + 0.8 s of back-off).
const (
	maxRetries    = 3
	retryDelay    = 200 * time.Millisecond
	maxRetryDelay = 2 * time.Second
	tryTimeout    = 30 * time.Second
)

// clientOptions are the options of every storage client.
func clientOptions(appID string) policy.ClientOptions {
	return policy.ClientOptions{
		Telemetry: policy.TelemetryOptions{ApplicationID: appID},
		Retry:     policy.RetryOptions{MaxRetries: maxRetries, RetryDelay: retryDelay, MaxRetryDelay: maxRetryDelay, TryTimeout: tryTimeout},
	}
}

func newWithKey(ep endpoints, appID string) (*Account, error) {
	co := clientOptions(appID)
	a := &Account{name: ep.account, blobURL: ep.blob + "/", queueURL: ep.queue + "/", tableURL: ep.table + "/"}
	bk, err := azblob.NewSharedKeyCredential(ep.account, ep.accountKey)
	if err != nil {
		return nil, fmt.Errorf("azconn: %s: AccountKey is not valid base64", SettingConnectionString)
	}
	a.blobKey = bk
	if a.blob, err = azblob.NewClientWithSharedKeyCredential(a.blobURL, bk, &azblob.ClientOptions{ClientOptions: co}); err != nil {
		return nil, fmt.Errorf("azconn: blob client: %w", err)
	}
	tk, err := aztables.NewSharedKeyCredential(ep.account, ep.accountKey)
	if err != nil {
		return nil, fmt.Errorf("azconn: %s: AccountKey is not valid base64", SettingConnectionString)
	}
	if a.tables, err = aztables.NewServiceClientWithSharedKey(a.tableURL, tk, &aztables.ClientOptions{ClientOptions: co}); err != nil {
		return nil, fmt.Errorf("azconn: table client: %w", err)
	}
	qk, err := azqueue.NewSharedKeyCredential(ep.account, ep.accountKey)
	if err != nil {
		return nil, fmt.Errorf("azconn: %s: AccountKey is not valid base64", SettingConnectionString)
	}
	if a.queues, err = azqueue.NewServiceClientWithSharedKeyCredential(a.queueURL, qk, &azqueue.ClientOptions{ClientOptions: co}); err != nil {
		return nil, fmt.Errorf("azconn: queue client: %w", err)
	}
	return a, nil
}

func newWithIdentity(cfg Config, name string) (*Account, error) {
	co := clientOptions(cfg.ApplicationID)
	if !validAccountName(name) {
		return nil, fmt.Errorf("azconn: %s must be 3-24 lowercase letters and digits", SettingAccountName)
	}
	suffix := strings.Trim(strings.TrimSpace(cfg.EndpointSuffix), ".")
	if suffix == "" {
		suffix = DefaultEndpointSuffix
	}
	if strings.ContainsAny(suffix, "/:@ ") {
		return nil, fmt.Errorf("azconn: %s must be a DNS suffix such as %s", SettingEndpointSuffix, DefaultEndpointSuffix)
	}
	cred := cfg.Credential
	if cred == nil {
		mi, err := ManagedIdentity(cfg.ClientID)
		if err != nil {
			return nil, fmt.Errorf("azconn: managed identity (%s): %w", SettingClientID, err)
		}
		cred = mi
	}
	a := &Account{
		name:     name,
		blobURL:  fmt.Sprintf("https://%s.blob.%s/", name, suffix),
		queueURL: fmt.Sprintf("https://%s.queue.%s/", name, suffix),
		tableURL: fmt.Sprintf("https://%s.table.%s/", name, suffix),
		token:    cred,
	}
	var err error
	if a.blob, err = azblob.NewClient(a.blobURL, cred, &azblob.ClientOptions{ClientOptions: co}); err != nil {
		return nil, fmt.Errorf("azconn: blob client: %w", err)
	}
	if a.tables, err = aztables.NewServiceClient(a.tableURL, cred, &aztables.ClientOptions{ClientOptions: co}); err != nil {
		return nil, fmt.Errorf("azconn: table client: %w", err)
	}
	if a.queues, err = azqueue.NewServiceClient(a.queueURL, cred, &azqueue.ClientOptions{ClientOptions: co}); err != nil {
		return nil, fmt.Errorf("azconn: queue client: %w", err)
	}
	return a, nil
}

// Name is the storage account name.
func (a *Account) Name() string { return a.name }

// BlobURL, QueueURL and TableURL are the service endpoints, each ending in "/".
func (a *Account) BlobURL() string  { return a.blobURL }
func (a *Account) QueueURL() string { return a.queueURL }
func (a *Account) TableURL() string { return a.tableURL }

// Blob is the blob service client.
func (a *Account) Blob() *azblob.Client { return a.blob }

// Tables is the table service client.
func (a *Account) Tables() *aztables.ServiceClient { return a.tables }

// Queues is the queue service client.
func (a *Account) Queues() *azqueue.ServiceClient { return a.queues }

// HasSharedKey reports whether the account authenticates with its key, so that service SAS can
// be signed locally; without it SAS needs a user delegation key.
func (a *Account) HasSharedKey() bool { return a.blobKey != nil }

// BlobSharedKey is the key credential for signing blob service SAS, or nil under a token
// credential.
func (a *Account) BlobSharedKey() *service.SharedKeyCredential { return a.blobKey }

// TokenCredential is the token credential (managed identity), or nil under a shared key.
func (a *Account) TokenCredential() azcore.TokenCredential { return a.token }

// String describes the account for the start-up log, without secrets.
func (a *Account) String() string {
	auth := "managed identity"
	if a.HasSharedKey() {
		auth = "shared key"
	}
	return fmt.Sprintf("storage account %s (%s): blob %s queue %s table %s", a.name, auth, a.blobURL, a.queueURL, a.tableURL)
}
