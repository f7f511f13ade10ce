// Package version holds the engine version, set at build time with
// -ldflags "-X github.com/esign-svc/esign/shared/version.Engine=<v>". The evidence certificate and
// /api/health report it.
package version

// Engine is the engine version; "dev" when built without the Makefile.
var Engine = "dev"
