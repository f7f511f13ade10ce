// Command devpki serves the development PKI that devsetup --pki-url made under <dir>/keys
// (DESIGN 15): the RFC 3161 TSA (/tsa), the RFC 6960 OCSP responder (/ocsp) for the seal and
// TSA certificates, the root's CRL (/crl/root.crl) and the CA certificates (/ca/...), so that a
// local seal is PAdES B-LTA. Loopback only; for `make run`.
//
//	devpki --dir .local --listen 127.0.0.1:7074
package main

import (
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/esign-svc/esign/devtools/devkeys"
)

func main() {
	fs := flag.NewFlagSet("devpki", flag.ExitOnError)
	dir := fs.String("dir", ".local", "directory holding keys/ (devsetup --pki-url made the PKI there)")
	listen := fs.String("listen", "127.0.0.1:7074", "loopback address the PKI's certificates name")
	_ = fs.Parse(os.Args[1:])
	ln, err := net.Listen("tcp", *listen)
	if err == nil {
		err = devkeys.ServePKI(ln, *dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "devpki:", err)
		os.Exit(1)
	}
}
