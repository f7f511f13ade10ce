package apptest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"testing"
	"time"
)

// The seal key is made once, its certificate is its own (self-signed, for the key) and valid now.
func TestSealKeyIsOneSelfSignedKey(t *testing.T) {
	k, c := SealKey()
	if k2, c2 := SealKey(); k2 != k || c2 != c {
		t.Fatal("SealKey made a second key")
	}
	if err := c.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature); err != nil {
		t.Fatalf("not self-signed: %v", err)
	}
	if now := time.Now(); now.Before(c.NotBefore) || now.After(c.NotAfter) {
		t.Fatalf("not valid now: %v..%v", c.NotBefore, c.NotAfter)
	}
	sum := sha256.Sum256([]byte("document"))
	sig, err := rsa.SignPKCS1v15(nil, k, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	if err := rsa.VerifyPKCS1v15(c.PublicKey.(*rsa.PublicKey), crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("the certificate is not the key's: %v", err)
	}
}

// SelfSigned certifies the key it is given, under the name given.
func TestSelfSignedIsTheKeys(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := SelfSigned(k, "cfg")
	if c.Subject.CommonName != "cfg" || !k.PublicKey.Equal(c.PublicKey) {
		t.Fatalf("certificate %q of another key", c.Subject.CommonName)
	}
}
