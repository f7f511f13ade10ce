package devkeys

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/esign-svc/esign/shared/pdf/pades"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
)

// DefaultPKIURL is where `make run` serves the development PKI (devtools/cmd/devpki): the TSA
// is <url>/tsa, the OCSP responder <url>/ocsp, the root's CRL <url>/crl/root.crl.
const DefaultPKIURL = "http://127.0.0.1:7074"

// Files of the development PKI under <dir>/keys (each a PKCS#8 key and its certificate).
const (
	FilePKIRoot = "pki-root.pem"
	FilePKICA   = "pki-issuing-ca.pem"
	FilePKITSA  = "pki-tsa.pem"
)

var pkiFiles = map[string]string{tsatest.PEMRoot: FilePKIRoot, tsatest.PEMCA: FilePKICA, tsatest.PEMTSA: FilePKITSA}

// pkiLeafValidity is the dev TSA's and seal's certificate lifetime; renewEarly re-issues a
// seal certificate that expires sooner (the keys stay).
const (
	pkiLeafValidity = 2 * 365 * 24 * time.Hour
	renewEarly      = 30 * 24 * time.Hour
)

// ensurePKI makes the development PKI for url when none exists, and re-issues the seal
// certificate (for the existing seal key) under its issuing CA when the certificate is not
// one of the PKI's (a self-signed seal of an older .local) or expires within 30 days; the
// certificate file then holds the chain: seal, issuing CA, root. Errors: a partial or
// unreadable PKI, or one made for another URL (named; delete the files to regenerate).
func ensurePKI(kd, url string, now time.Time, created *[]string) error {
	pems := map[string][]byte{}
	missing := 0
	for name, file := range pkiFiles {
		b, err := os.ReadFile(filepath.Join(kd, file))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing++
		case err != nil:
			return err
		default:
			pems[name] = b
		}
	}
	var p *tsatest.PKI
	switch missing {
	case len(pkiFiles):
		var err error
		if p, err = tsatest.NewPKI(url, pkiLeafValidity); err != nil {
			return err
		}
		out, err := p.PEMs()
		if err != nil {
			return err
		}
		for name, file := range pkiFiles {
			if _, err := createFile(filepath.Join(kd, file), out[name], 0o600); err != nil {
				return err
			}
			*created = append(*created, file)
		}
	case 0:
		var err error
		if p, err = tsatest.LoadPKI(pems); err != nil {
			return fmt.Errorf("%w (delete %s/pki-*.pem to regenerate)", err, kd)
		}
		if p.BaseURL != url {
			return fmt.Errorf("the dev PKI under %s serves %s, not %s: delete %s/pki-*.pem to make one for the new address", kd, p.BaseURL, url, kd)
		}
	default:
		return fmt.Errorf("the dev PKI under %s is incomplete: delete %s/pki-*.pem to regenerate it", kd, kd)
	}
	return ensureSealUnder(p, filepath.Join(kd, FileSealCert), filepath.Join(kd, FileSealKey), now, created)
}

func ensureSealUnder(p *tsatest.PKI, certPath, keyPath string, now time.Time, created *[]string) error {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return err
	}
	signer, chain, err := pades.LoadPEM(keyPEM, certPEM)
	if err != nil {
		return fmt.Errorf("%s: %w (delete it and %s to regenerate)", certPath, err, keyPath)
	}
	if chain[0].CheckSignatureFrom(p.CA) == nil && chain[0].NotAfter.After(now.Add(renewEarly)) {
		return nil
	}
	c, err := p.IssueSeal(signer.Public(), SealCommonName, pkiLeafValidity)
	if err != nil {
		return err
	}
	var out []byte
	for _, x := range []*x509.Certificate{c, p.CA, p.Root} {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: x.Raw})...)
	}
	if err := replaceFile(certPath, out, 0o644); err != nil {
		return err
	}
	// a certificate made self-signed on this very run is not reported twice
	*created = slices.DeleteFunc(*created, func(n string) bool { return n == filepath.Base(certPath) })
	*created = append(*created, filepath.Base(certPath)+" (issued by the dev PKI)")
	return nil
}

// LoadPKI reads the development PKI under <dir>/keys, with the seal certificate registered at
// its OCSP responder. Errors: missing or unreadable files.
func LoadPKI(dir string) (*tsatest.PKI, error) {
	kd := filepath.Join(dir, KeysDir)
	pems := map[string][]byte{}
	for name, file := range pkiFiles {
		b, err := os.ReadFile(filepath.Join(kd, file))
		if err != nil {
			return nil, fmt.Errorf("dev PKI: %w (run devsetup with --pki-url)", err)
		}
		pems[name] = b
	}
	certPEM, err := os.ReadFile(filepath.Join(kd, FileSealCert))
	if err != nil {
		return nil, err
	}
	var leaves []*x509.Certificate
	if b, _ := pem.Decode(certPEM); b != nil {
		if c, err := x509.ParseCertificate(b.Bytes); err == nil {
			leaves = append(leaves, c)
		}
	}
	return tsatest.LoadPKI(pems, leaves...)
}

// ServePKI serves the development PKI under dir on ln until SIGINT or SIGTERM.
func ServePKI(ln net.Listener, dir string) error {
	p, err := LoadPKI(dir)
	if err != nil {
		return err
	}
	return Serve(ln, p.Handler())
}
