package pades

import (
	"crypto"
	"crypto/x509"
	"encoding/asn1"
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
// a PKCS#12 file: a key with its certificates, a Java trust store, or (password empty) a file
// of certificates alone, as a key vault returns the certificate of a non-exportable key.
// withKey reports whether the data holds a private key too (which is not read). Errors wrap
// ErrKey: a malformed certificate or file, or no certificate.
func ParseCertificates(data []byte, pkcs12Password *string) (certs []*x509.Certificate, withKey bool, err error) {
	var blocks []*pem.Block
	if pkcs12Password != nil {
		// go-pkcs12 reads two authenticated safes (certificates, key) or a Java trust store
		if blocks, err = pkcs12.ToPEM(data, *pkcs12Password); err != nil {
			if trusted, tsErr := pkcs12.DecodeTrustStore(data, *pkcs12Password); tsErr == nil {
				return trusted, false, nil
			}
			two, twoErr := withEmptySecondSafe(data)
			if *pkcs12Password != "" || twoErr != nil {
				return nil, false, fmt.Errorf("%w: pkcs12: %v", ErrKey, err)
			}
			if blocks, err = pkcs12.ToPEM(two, ""); err != nil {
				return nil, false, fmt.Errorf("%w: pkcs12: %v", ErrKey, err)
			}
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

// pfx is the outer PKCS#12 structure (RFC 7292), its MAC kept raw.
type pfx struct {
	Version  int
	AuthSafe struct {
		ContentType asn1.ObjectIdentifier
		Content     asn1.RawValue `asn1:"tag:0,explicit,optional"`
	}
	MacData asn1.RawValue `asn1:"optional"`
}

// contentInfo is a PKCS#7 ContentInfo to marshal: Content is the [0] element itself.
type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue
}

var oidData = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}

// withEmptySecondSafe rewrites a password-less PKCS#12 file of one authenticated safe (the
// certificates, no key: what a key vault returns for a non-exportable key) into one of two,
// the second an empty data safe, so that go-pkcs12's ToPEM, which wants two, reads it. The MAC,
// over the old content, is dropped: the file's integrity is the channel's (the vault's TLS),
// and the caller checks the certificates against the key.
func withEmptySecondSafe(data []byte) ([]byte, error) {
	var p pfx
	if rest, err := asn1.Unmarshal(data, &p); err != nil || len(rest) > 0 || !p.AuthSafe.ContentType.Equal(oidData) {
		return nil, errors.New("not a PKCS#12 file of data content")
	}
	var octets []byte
	if _, err := asn1.Unmarshal(p.AuthSafe.Content.Bytes, &octets); err != nil {
		return nil, err
	}
	var safes []asn1.RawValue
	if rest, err := asn1.Unmarshal(octets, &safes); err != nil || len(rest) > 0 || len(safes) != 1 {
		return nil, errors.New("not a PKCS#12 file of one authenticated safe")
	}
	wrap := func(der []byte) (asn1.RawValue, error) {
		o, err := asn1.Marshal(der) // OCTET STRING
		return asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: o}, err
	}
	empty, err := wrap([]byte{0x30, 0x00}) // SafeContents: an empty SEQUENCE
	if err != nil {
		return nil, err
	}
	second, err := asn1.Marshal(contentInfo{ContentType: oidData, Content: empty})
	if err != nil {
		return nil, err
	}
	auth, err := asn1.Marshal(append(safes, asn1.RawValue{FullBytes: second}))
	if err != nil {
		return nil, err
	}
	content, err := wrap(auth)
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(struct {
		Version  int
		AuthSafe contentInfo
	}{p.Version, contentInfo{ContentType: oidData, Content: content}})
}
