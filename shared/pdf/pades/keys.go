package pades

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"software.sslmate.com/src/go-pkcs12"
)

// ErrKey is wrapped by key loading failures.
var ErrKey = errors.New("pades: seal key")

// LoadPEM reads a private key (PKCS#8, PKCS#1 RSA or SEC 1 EC) and a certificate chain (signer
// first) from PEM data; key and certificates may be in one or two inputs. Errors wrap ErrKey.
func LoadPEM(data ...[]byte) (crypto.Signer, []*x509.Certificate, error) {
	var key crypto.Signer
	var chain []*x509.Certificate
	for _, d := range data {
		for {
			var b *pem.Block
			b, d = pem.Decode(d)
			if b == nil {
				break
			}
			switch b.Type {
			case "CERTIFICATE":
				c, err := x509.ParseCertificate(b.Bytes)
				if err != nil {
					return nil, nil, fmt.Errorf("%w: certificate: %v", ErrKey, err)
				}
				chain = append(chain, c)
			case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY":
				k, err := parseKey(b)
				if err != nil {
					return nil, nil, err
				}
				key = k
			}
		}
	}
	return checkPair(key, chain)
}

func parseKey(b *pem.Block) (crypto.Signer, error) {
	var k any
	var err error
	switch b.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	default:
		k, err = x509.ParseECPrivateKey(b.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: private key: %v", ErrKey, err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%w: private key type %T cannot sign", ErrKey, k)
	}
	return s, nil
}

// LoadPKCS12 reads a PKCS#12 (PFX) file, including the AES/PBES2 files OpenSSL 3 writes by
// default (software.sslmate.com/src/go-pkcs12). Errors wrap ErrKey.
func LoadPKCS12(data []byte, password string) (crypto.Signer, []*x509.Certificate, error) {
	k, cert, cas, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: pkcs12: %v", ErrKey, err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("%w: private key type %T cannot sign", ErrKey, k)
	}
	return checkPair(s, append([]*x509.Certificate{cert}, cas...))
}

// checkPair puts the certificate matching key first.
func checkPair(key crypto.Signer, chain []*x509.Certificate) (crypto.Signer, []*x509.Certificate, error) {
	if key == nil {
		return nil, nil, fmt.Errorf("%w: no private key found", ErrKey)
	}
	chain, err := SignerFirst(key.Public(), chain)
	if err != nil {
		return nil, nil, err
	}
	return key, chain, nil
}

// SignerFirst puts the certificate of the public key pub first in chain (in place) and returns
// it: a signer whose private key stays elsewhere (a key vault) is paired with its certificate
// this way. Errors wrap ErrKey: no certificate carries pub.
func SignerFirst(pub crypto.PublicKey, chain []*x509.Certificate) ([]*x509.Certificate, error) {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	for i, c := range chain {
		if e, ok := pub.(equaler); ok && e.Equal(c.PublicKey) {
			chain[0], chain[i] = chain[i], chain[0]
			return chain, nil
		}
	}
	return nil, fmt.Errorf("%w: no certificate matches the private key", ErrKey)
}

// ParseCertificates reads the certificates of PEM data or, when pkcs12Password is not nil, of
// a PKCS#12 file: a key with its certificates, or a certificates-only trust store (what
// go-pkcs12 reads). withKey reports whether the data holds a private key too (which is not
// read). Errors wrap ErrKey: a malformed certificate or file, or no certificate.
func ParseCertificates(data []byte, pkcs12Password *string) (certs []*x509.Certificate, withKey bool, err error) {
	var blocks []*pem.Block
	if pkcs12Password != nil {
		// a key and its certificates (two safes), or else a certificates-only trust store
		if blocks, err = pkcs12.ToPEM(data, *pkcs12Password); err != nil {
			trusted, tsErr := pkcs12.DecodeTrustStore(data, *pkcs12Password)
			if tsErr != nil {
				return nil, false, fmt.Errorf("%w: pkcs12: %v", ErrKey, err)
			}
			return trusted, false, nil
		}
	} else {
		for {
			var b *pem.Block
			if b, data = pem.Decode(data); b == nil {
				break
			}
			blocks = append(blocks, b)
		}
	}
	for _, b := range blocks {
		switch {
		case b.Type == "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, false, fmt.Errorf("%w: certificate: %v", ErrKey, err)
			}
			certs = append(certs, c)
		case strings.HasSuffix(b.Type, "PRIVATE KEY"):
			withKey = true
		}
	}
	if len(certs) == 0 {
		return nil, false, fmt.Errorf("%w: no certificate found", ErrKey)
	}
	return certs, withKey, nil
}
