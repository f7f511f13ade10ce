package apptest

import (
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
		now := time.Now()
		tpl := &x509.Certificate{
			SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: "esign test seal", Organization: []string{"esign tests"}},
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
		sealPriv, sealCert = k, c
	})
	return sealPriv, sealCert
}
