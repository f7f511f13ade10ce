// Package azconn turns the storage configuration into Azure Storage clients: a connection string
// (Azurite's explicit devstoreaccount1 form, or an account key form) or a managed identity in
// Azure. Only main reads the environment: it fills a Config (ConfigFromLookup helps) and calls New.
package azconn

import (
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// Names of the settings a Config is read from; errors name them so that a bad deployment says
// which app setting to fix.
const (
	SettingConnectionString = "STORAGE_CONNECTION_STRING"
	SettingAccountName      = "STORAGE_ACCOUNT_NAME"
	SettingClientID         = "STORAGE_CLIENT_ID"
	SettingEndpointSuffix   = "STORAGE_ENDPOINT_SUFFIX"
)

// CodeStorageError is the internal problem of a storage call that failed for a reason the
// adapters (blobstore, queuestore, tablestore) do not translate.
const CodeStorageError = "storage_error"

// DefaultEndpointSuffix is the public Azure cloud's storage suffix.
const DefaultEndpointSuffix = "core.windows.net"

// Config chooses how to reach the storage account. Exactly one of ConnectionString and
// AccountName is set.
type Config struct {
	// ConnectionString is an account connection string: either the explicit development form
	// with BlobEndpoint, QueueEndpoint and TableEndpoint (Azurite), or
	// AccountName/AccountKey[/EndpointSuffix]. UseDevelopmentStorage=true is refused: the Go
	// SDKs do not understand it.
	ConnectionString string
	// AccountName selects managed identity: the account is reached at
	// https://<name>.{blob,queue,table}.<EndpointSuffix> with a token credential.
	AccountName string
	// ClientID is the client id of a user-assigned managed identity; empty uses the
	// system-assigned identity.
	ClientID string
	// EndpointSuffix overrides DefaultEndpointSuffix in managed-identity mode (sovereign clouds).
	EndpointSuffix string
	// Credential, when set, is used instead of a ManagedIdentityCredential in managed-identity
	// mode (for example an azidentity.DefaultAzureCredential on a developer machine).
	Credential azcore.TokenCredential
	// ApplicationID is put in front of every storage request's User-Agent ("esign-dispatcher"),
	// so the account's logs (and the tests' counting proxy) tell the apps apart.
	ApplicationID string
}

// ConfigFromLookup reads a Config from settings by name (pass os.LookupEnv in main, a map in
// tests). It does not validate: New does.
func ConfigFromLookup(lookup func(string) (string, bool)) Config {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	return Config{
		ConnectionString: get(SettingConnectionString),
		AccountName:      get(SettingAccountName),
		ClientID:         get(SettingClientID),
		EndpointSuffix:   get(SettingEndpointSuffix),
	}
}

// endpoints is a parsed configuration: where each service is and how to authenticate.
type endpoints struct {
	account            string
	accountKey         string // empty in managed-identity mode
	blob, queue, table string
}

// parseConnectionString reads the key=value;... form. Keys are case-insensitive; a value may
// contain '=' (account keys end in '=').
func parseConnectionString(cs string) (endpoints, error) {
	kv := map[string]string{}
	for i, part := range strings.Split(cs, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			// The segment is not echoed: it could be a piece of the account key.
			return endpoints{}, fmt.Errorf("azconn: %s: segment %d is not key=value", SettingConnectionString, i+1)
		}
		kv[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if strings.EqualFold(kv["usedevelopmentstorage"], "true") {
		return endpoints{}, fmt.Errorf("azconn: %s: UseDevelopmentStorage=true is not supported by the Go SDKs; "+
			"use the explicit form: DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=...;"+
			"BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;"+
			"TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;", SettingConnectionString)
	}
	if _, ok := kv["sharedaccesssignature"]; ok {
		return endpoints{}, fmt.Errorf("azconn: %s: SharedAccessSignature connection strings are not supported; use an account key or managed identity (%s)", SettingConnectionString, SettingAccountName)
	}
	ep := endpoints{account: kv["accountname"], accountKey: kv["accountkey"]}
	if ep.account == "" {
		return endpoints{}, fmt.Errorf("azconn: %s: AccountName is missing", SettingConnectionString)
	}
	if ep.accountKey == "" {
		return endpoints{}, fmt.Errorf("azconn: %s: AccountKey is missing", SettingConnectionString)
	}
	proto := strings.ToLower(kv["defaultendpointsprotocol"])
	if proto == "" {
		proto = "https"
	}
	if proto != "https" && proto != "http" {
		return endpoints{}, fmt.Errorf("azconn: %s: DefaultEndpointsProtocol must be http or https", SettingConnectionString)
	}
	suffix := kv["endpointsuffix"]
	if suffix == "" {
		suffix = DefaultEndpointSuffix
	}
	derive := func(key, service string) (string, error) {
		if v := kv[key]; v != "" {
			if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
				return "", fmt.Errorf("azconn: %s: %s must be an http(s) URL", SettingConnectionString, key)
			}
			return strings.TrimRight(v, "/"), nil
		}
		return fmt.Sprintf("%s://%s.%s.%s", proto, ep.account, service, suffix), nil
	}
	var err error
	if ep.blob, err = derive("blobendpoint", "blob"); err != nil {
		return endpoints{}, err
	}
	if ep.queue, err = derive("queueendpoint", "queue"); err != nil {
		return endpoints{}, err
	}
	if ep.table, err = derive("tableendpoint", "table"); err != nil {
		return endpoints{}, err
	}
	return ep, nil
}

// validAccountName follows the storage rules: 3-24 lowercase letters and digits.
func validAccountName(s string) bool {
	if len(s) < 3 || len(s) > 24 {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
