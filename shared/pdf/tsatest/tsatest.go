// Package tsatest provides test certificates and an RFC 3161 time-stamping authority served by
// httptest, producing real signed TimeStampTokens. For tests only (the shared module's and the
// tests module's).
package tsatest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/pdf/cms"
)

// NewCert makes a self-signed certificate for key (RSA of bits, or ECDSA P-256 when bits is 0)
// with the given extended key usages.
func NewCert(t testing.TB, cn string, bits int, eku ...x509.ExtKeyUsage) (crypto.Signer, *x509.Certificate) {
	t.Helper()
	key, cert, err := MakeCert(cn, bits, eku...)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}

// MakeCert is NewCert for callers without a testing.TB (a TestMain).
func MakeCert(cn string, bits int, eku ...x509.ExtKeyUsage) (crypto.Signer, *x509.Certificate, error) {
	var key crypto.Signer
	var err error
	if bits == 0 {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	} else {
		key, err = rsa.GenerateKey(rand.Reader, bits)
	}
	if err != nil {
		return nil, nil, err
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"esign tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment | x509.KeyUsageCertSign,
		ExtKeyUsage:           eku,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return key, cert, nil
}

// Responder answers RFC 3161 requests (POST application/timestamp-query) with a granted
// response holding a TimeStampToken signed by Key, and counts what it granted.
type Responder struct {
	Key  crypto.Signer
	Cert *x509.Certificate
	// Issuers are added to the token's certificates after Cert (its chain).
	Issuers []*x509.Certificate
	// Now is the clock of genTime (nil: time.Now).
	Now     func() time.Time
	Granted atomic.Int64
	serial  atomic.Int64
}

// NewResponder makes a responder with its own RSA-2048 time-stamping certificate.
func NewResponder(cn string) (*Responder, error) {
	key, cert, err := MakeCert(cn, 2048, x509.ExtKeyUsageTimeStamping)
	if err != nil {
		return nil, err
	}
	return &Responder{Key: key, Cert: cert}, nil
}

func (rs *Responder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/timestamp-query" {
		http.Error(w, "want POST application/timestamp-query", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	if err != nil {
		return
	}
	now := time.Now
	if rs.Now != nil {
		now = rs.Now
	}
	info, _, err := cms.TSTInfoFor(body, big.NewInt(rs.serial.Add(1)), asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 99999, 1}, now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	tok, err := cms.Sign(context.Background(), cms.SignOptions{
		Signer: rs.Key, Chain: append([]*x509.Certificate{rs.Cert}, rs.Issuers...), Content: info, Encapsulate: true, ContentType: cms.OIDTSTInfo,
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	resp, err := cms.TimeStampResponse(tok)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/timestamp-reply")
	if _, err := w.Write(resp); err == nil {
		rs.Granted.Add(1)
	}
}

// TSA is a running test time-stamping authority.
type TSA struct {
	URL      string
	Cert     *x509.Certificate
	Requests atomic.Int64
}

// Start serves a TSA until the test ends. It answers application/timestamp-query POSTs with a
// granted response holding a TimeStampToken signed by its own RSA-2048 certificate.
func Start(t testing.TB) *TSA {
	t.Helper()
	rs, err := NewResponder("esign test TSA")
	if err != nil {
		t.Fatal(err)
	}
	tsa := &TSA{Cert: rs.Cert}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tsa.Requests.Add(1)
		rs.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tsa.URL = srv.URL
	return tsa
}
