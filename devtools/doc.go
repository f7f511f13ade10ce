// Package devtools is the root of the development runtime, what `make run` builds and runs and
// what the tests start in-process; DESIGN section 13 keeps it apart from the tests:
//
//	funchost/          the local Azure Functions host (cmd/funchost, and its conformance suite)
//	devkeys/           the dev keys, secrets, licence and .local/dev.env that make run writes
//	licensingstub/     the local licensing service (DESIGN 19) behind cmd/devlicensing
//	cmd/devsetup       makes what is missing under .local/ (make run's first step)
//	cmd/devtoken       a dev JWT the running service accepts (make token)
//	cmd/devoauth       the dev OAuth token endpoint for the connector's client credentials
//	cmd/devstore       Azurite from the command line: upload, download, the outbox (make outbox)
//	cmd/devlicensing   the local licensing service on LICENSING_URL
//
// The package itself holds only the test that make run's Makefile target and scripts build and
// run nothing under tests/, and that every package they name exists.
package devtools
