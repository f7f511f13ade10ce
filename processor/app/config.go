// Package app wires the processor: configuration, dependencies, and the router that maps each
// queue and timer function to its job.
package app

import (
	"fmt"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/config"
)

// Config is everything the processor needs, validated.
type Config struct {
	Port     string
	Storage  azconn.Config
	Settings map[string]string
}

// Load reads the configuration through lookup; the error names every setting at fault.
func Load(lookup config.Lookup) (Config, error) {
	r := config.NewReader(lookup)
	var c Config
	c.Port = r.String("FUNCTIONS_CUSTOMHANDLER_PORT", "8080")
	c.Storage = azconn.ConfigFromLookup(lookup)
	if c.Storage.ConnectionString == "" && c.Storage.AccountName == "" {
		r.Check(azconn.SettingConnectionString, fmt.Errorf("set it (locally) or %s (managed identity in Azure)", azconn.SettingAccountName))
	}
	c.Settings = r.Summary()
	return c, r.Err()
}
