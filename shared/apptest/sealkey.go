package apptest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"sync"
	"time"
)

var (
	sealOnce sync.Once
	sealPriv *rsa.PrivateKey
	sealCert *x509.Certificate
)

// SealKey is one RSA-2048 key and its self-signed seal certificate ("esign test seal", valid
// from an hour ago for a day, digital signature and content commitment), made once per test
// binary: the seal jobs' tests sign with it (as sealcfg.Key{Signer: k, Chain: {c}}).
func SealKey() (*rsa.PrivateKey, *x509.Certificate) {
	sealOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		sealPriv, sealCert = k, SelfSigned(k, "esign test seal")
	})
	return sealPriv, sealCert
}

// SelfSigned is a self-signed certificate of k named cn (organisation "esign tests"), valid from
// an hour ago for a day, for digital signature and content commitment (a seal certificate's
// key usage).
func SelfSigned(k crypto.Signer, cn string) *x509.Certificate {
	now := time.Now()
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: cn, Organization: []string{"esign tests"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageEmailProtection},
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, k.Public(), k)
	if err != nil {
		panic(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return c
}
