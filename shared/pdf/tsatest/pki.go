package tsatest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ocsp"
)

// Paths the PKI serves under its base URL.
const (
	PathTSA    = "/tsa"            // RFC 3161, POST application/timestamp-query
	PathOCSP   = "/ocsp"           // RFC 6960, POST application/ocsp-request or GET /ocsp/<base64>
	PathCRL    = "/crl/root.crl"   // the root's CRL (covers the issuing CA), DER
	PathRoot   = "/ca/root.cer"    // the root certificate (caIssuers of the issuing CA), DER
	PathIssuer = "/ca/issuing.cer" // the issuing CA (caIssuers of the leaves), DER
)

// oidTimeStamping is id-kp-timeStamping; RFC 3161 2.3 wants the extension critical, which
// x509.Certificate.ExtKeyUsage cannot say, so it goes in ExtraExtensions.
var oidExtKeyUsage = asn1.ObjectIdentifier{2, 5, 29, 37}
var oidTimeStamping = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 8}

// PKI is a development public-key infrastructure, real DER throughout: a root, an issuing CA
// under it, a seal (document signing) certificate and an RFC 3161 time-stamping certificate
// under the issuing CA, an OCSP responder (RFC 6960, answers signed by the issuing CA) for the
// leaves and a CRL of the root for the issuing CA. Every certificate names where its
// revocation data lives (OCSP for the leaves, the CRL distribution point for the issuing CA)
// and where its issuer's certificate is (caIssuers), all under BaseURL, so a client needs
// nothing but the certificates to collect validation data.
//
// For tests (Start) and for `make run` (devtools: the keys live under .local/keys, see
// devkeys, and cmd/devpki serves Handler on loopback).
type PKI struct {
	BaseURL string
	Root    *x509.Certificate
	CA      *x509.Certificate
	Seal    *x509.Certificate
	TSA     *x509.Certificate

	RootKey, CAKey, SealKey, TSAKey crypto.Signer

	// Now is the responders' clock (nil: time.Now); tests move it.
	Now func() time.Time
	// OCSPDown and CRLDown make the responder and the CRL answer 503.
	OCSPDown, CRLDown atomic.Bool
	// Counters of answered requests.
	OCSPRequests, CRLRequests, TSARequests atomic.Int64

	mu      sync.Mutex
	issued  map[string]bool // serials (decimal) of the leaves the issuing CA issued
	revoked map[string]time.Time
	tsa     *Responder
}

// NewPKI makes every key (ECDSA P-256) and certificate for a PKI served at baseURL; leaves
// (seal and TSA) are valid for leafValidity from now (an hour back-dated), the CAs ten years.
func NewPKI(baseURL string, leafValidity time.Duration) (*PKI, error) {
	p := &PKI{BaseURL: strings.TrimRight(baseURL, "/")}
	var err error
	now := time.Now().Add(-time.Hour)
	if p.RootKey, err = newKey(); err != nil {
		return nil, err
	}
	p.Root, err = p.issue(&x509.Certificate{
		Subject:   pkix.Name{CommonName: "eSign Dev Root CA", Organization: []string{"esign dev PKI"}},
		NotBefore: now, NotAfter: now.AddDate(10, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}, p.RootKey.Public(), nil, p.RootKey)
	if err != nil {
		return nil, err
	}
	if p.CAKey, err = newKey(); err != nil {
		return nil, err
	}
	p.CA, err = p.issue(&x509.Certificate{
		Subject:   pkix.Name{CommonName: "eSign Dev Issuing CA", Organization: []string{"esign dev PKI"}},
		NotBefore: now, NotAfter: now.AddDate(10, 0, 0), IsCA: true, BasicConstraintsValid: true,
		MaxPathLenZero: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		CRLDistributionPoints: []string{p.BaseURL + PathCRL}, IssuingCertificateURL: []string{p.BaseURL + PathRoot},
	}, p.CAKey.Public(), p.Root, p.RootKey)
	if err != nil {
		return nil, err
	}
	if p.SealKey, err = newKey(); err != nil {
		return nil, err
	}
	if p.Seal, err = p.IssueSeal(p.SealKey.Public(), "eSign Dev Seal", leafValidity); err != nil {
		return nil, err
	}
	if p.TSAKey, err = newKey(); err != nil {
		return nil, err
	}
	if p.TSA, err = p.IssueTSA(p.TSAKey.Public(), leafValidity); err != nil {
		return nil, err
	}
	return p, nil
}

func newKey() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

// issue signs tmpl with key as parent (self-signed when parent is nil).
func (p *PKI) issue(tmpl *x509.Certificate, pub crypto.PublicKey, parent *x509.Certificate, key crypto.Signer) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, key)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

func (p *PKI) leaf(tmpl *x509.Certificate, pub crypto.PublicKey) (*x509.Certificate, error) {
	tmpl.OCSPServer = []string{p.BaseURL + PathOCSP}
	tmpl.IssuingCertificateURL = []string{p.BaseURL + PathIssuer}
	c, err := p.issue(tmpl, pub, p.CA, p.CAKey)
	if err != nil {
		return nil, err
	}
	p.Register(c)
	return c, nil
}

// IssueSeal issues a seal certificate for pub under the issuing CA, valid for validity.
func (p *PKI) IssueSeal(pub crypto.PublicKey, cn string, validity time.Duration) (*x509.Certificate, error) {
	now := time.Now().Add(-time.Hour)
	return p.leaf(&x509.Certificate{
		Subject:   pkix.Name{CommonName: cn, Organization: []string{"esign dev PKI"}},
		NotBefore: now, NotAfter: now.Add(validity),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment,
	}, pub)
}

// IssueTSA issues a time-stamping certificate (critical id-kp-timeStamping) for pub.
func (p *PKI) IssueTSA(pub crypto.PublicKey, validity time.Duration) (*x509.Certificate, error) {
	eku, err := asn1.Marshal([]asn1.ObjectIdentifier{oidTimeStamping})
	if err != nil {
		return nil, err
	}
	now := time.Now().Add(-time.Hour)
	return p.leaf(&x509.Certificate{
		Subject:   pkix.Name{CommonName: "eSign Dev TSA", Organization: []string{"esign dev PKI"}},
		NotBefore: now, NotAfter: now.Add(validity),
		KeyUsage:        x509.KeyUsageDigitalSignature,
		ExtraExtensions: []pkix.Extension{{Id: oidExtKeyUsage, Critical: true, Value: eku}},
	}, pub)
}

// RenewTSA gives the TSA a new key and certificate valid for validity (the old one stays
// known to the OCSP responder): how a test ends a short-lived TSA certificate's life.
func (p *PKI) RenewTSA(validity time.Duration) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	c, err := p.IssueTSA(key.Public(), validity)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.TSAKey, p.TSA, p.tsa = key, c, nil
	p.mu.Unlock()
	return nil
}

// Register makes the OCSP responder answer for c (a leaf of the issuing CA).
func (p *PKI) Register(c *x509.Certificate) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.issued == nil {
		p.issued = map[string]bool{}
	}
	p.issued[c.SerialNumber.String()] = true
}

// Revoke makes the OCSP responder (a leaf) or the CRL (the issuing CA) say c is revoked, from
// now on.
func (p *PKI) Revoke(c *x509.Certificate) { p.RevokeAt(c, p.now()) }

// RevokeAt is Revoke with the revocation time at.
func (p *PKI) RevokeAt(c *x509.Certificate, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.revoked == nil {
		p.revoked = map[string]time.Time{}
	}
	p.revoked[c.SerialNumber.String()] = at
}

func (p *PKI) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// SealChain is the seal certificate's chain, signer first, root last.
func (p *PKI) SealChain() []*x509.Certificate { return []*x509.Certificate{p.Seal, p.CA, p.Root} }

// Handler serves the TSA, the OCSP responder, the CRL and the CA certificates.
func (p *PKI) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathTSA, func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		if p.tsa == nil {
			p.tsa = &Responder{Key: p.TSAKey, Cert: p.TSA, Issuers: []*x509.Certificate{p.CA, p.Root}, Now: p.now}
		}
		rs := p.tsa
		p.mu.Unlock()
		p.TSARequests.Add(1)
		rs.ServeHTTP(w, r)
	})
	mux.HandleFunc("POST "+PathOCSP, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<14))
		if err != nil {
			return
		}
		p.answerOCSP(w, body)
	})
	mux.HandleFunc("GET "+PathOCSP+"/{req...}", func(w http.ResponseWriter, r *http.Request) {
		der, err := base64.StdEncoding.DecodeString(r.PathValue("req"))
		if err != nil {
			http.Error(w, "request is not base64", http.StatusBadRequest)
			return
		}
		p.answerOCSP(w, der)
	})
	mux.HandleFunc("GET "+PathCRL, func(w http.ResponseWriter, r *http.Request) {
		if p.CRLDown.Load() {
			http.Error(w, "CRL unavailable", http.StatusServiceUnavailable)
			return
		}
		der, err := p.CRL()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		p.CRLRequests.Add(1)
		w.Header().Set("Content-Type", "application/pkix-crl")
		_, _ = w.Write(der)
	})
	cert := func(c func() *x509.Certificate) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/pkix-cert")
			_, _ = w.Write(c().Raw)
		}
	}
	mux.HandleFunc("GET "+PathRoot, cert(func() *x509.Certificate { return p.Root }))
	mux.HandleFunc("GET "+PathIssuer, cert(func() *x509.Certificate { return p.CA }))
	return mux
}

// CRL is the root's current CRL (DER), valid for a day.
func (p *PKI) CRL() ([]byte, error) {
	now := p.now()
	p.mu.Lock()
	var entries []x509.RevocationListEntry
	for s, at := range p.revoked {
		if s == p.CA.SerialNumber.String() {
			entries = append(entries, x509.RevocationListEntry{SerialNumber: p.CA.SerialNumber, RevocationTime: at})
		}
	}
	p.mu.Unlock()
	return x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number: big.NewInt(now.Unix()), ThisUpdate: now.Add(-time.Minute), NextUpdate: now.Add(24 * time.Hour),
		RevokedCertificateEntries: entries,
	}, p.Root, p.RootKey)
}

func (p *PKI) answerOCSP(w http.ResponseWriter, der []byte) {
	if p.OCSPDown.Load() {
		http.Error(w, "OCSP responder unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/ocsp-response")
	req, err := ocsp.ParseRequest(der)
	if err != nil {
		_, _ = w.Write(ocsp.MalformedRequestErrorResponse)
		return
	}
	if !bytes.Equal(req.IssuerKeyHash, keyHash(p.CA, req.HashAlgorithm)) {
		_, _ = w.Write(ocsp.UnauthorizedErrorResponse)
		return
	}
	now := p.now()
	tmpl := ocsp.Response{
		SerialNumber: req.SerialNumber, ThisUpdate: now.Add(-time.Minute), NextUpdate: now.Add(time.Hour),
		ProducedAt: now, Status: ocsp.Unknown, IssuerHash: req.HashAlgorithm,
	}
	p.mu.Lock()
	if p.issued[req.SerialNumber.String()] {
		tmpl.Status = ocsp.Good
	}
	if at, ok := p.revoked[req.SerialNumber.String()]; ok {
		tmpl.Status, tmpl.RevokedAt, tmpl.RevocationReason = ocsp.Revoked, at, ocsp.KeyCompromise
	}
	p.mu.Unlock()
	resp, err := ocsp.CreateResponse(p.CA, p.CA, tmpl, p.CAKey)
	if err != nil {
		_, _ = w.Write(ocsp.InternalErrorErrorResponse)
		return
	}
	p.OCSPRequests.Add(1)
	_, _ = w.Write(resp)
}

// keyHash is the hash of c's subjectPublicKey BIT STRING (RFC 6960 4.1.1 issuerKeyHash).
func keyHash(c *x509.Certificate, h crypto.Hash) []byte {
	var spki struct {
		Algorithm pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}
	if _, err := asn1.Unmarshal(c.RawSubjectPublicKeyInfo, &spki); err != nil || !h.Available() {
		return nil
	}
	if h == crypto.SHA1 {
		s := sha1.Sum(spki.PublicKey.RightAlign())
		return s[:]
	}
	hh := h.New()
	hh.Write(spki.PublicKey.RightAlign())
	return hh.Sum(nil)
}

// StartPKI serves a new PKI (leaves valid for leafValidity) on a loopback httptest server
// until the test ends.
func StartPKI(t testing.TB, leafValidity time.Duration) *PKI {
	t.Helper()
	var h atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p, err := NewPKI(srv.URL, leafValidity)
	if err != nil {
		t.Fatal(err)
	}
	h.Store(p.Handler())
	return p
}

// PEM files of a persisted PKI (see WritePEM, LoadPKI): each holds a key and its certificate.
const (
	PEMRoot = "root"
	PEMCA   = "issuing-ca"
	PEMTSA  = "tsa"
)

// EncodePEM is key (PKCS#8) followed by cert.
func EncodePEM(key crypto.Signer, cert *x509.Certificate) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})...), nil
}

// PEMs returns the PKI's persisted form: PEMRoot, PEMCA and PEMTSA to EncodePEM bytes.
func (p *PKI) PEMs() (map[string][]byte, error) {
	out := map[string][]byte{}
	for name, kc := range map[string]struct {
		k crypto.Signer
		c *x509.Certificate
	}{PEMRoot: {p.RootKey, p.Root}, PEMCA: {p.CAKey, p.CA}, PEMTSA: {p.TSAKey, p.TSA}} {
		b, err := EncodePEM(kc.k, kc.c)
		if err != nil {
			return nil, err
		}
		out[name] = b
	}
	return out, nil
}

// LoadPKI is the PKI persisted by PEMs, served at the base URL its certificates name; leaves
// are the other certificates its issuing CA issued (the seal), for the OCSP responder.
// Errors: a missing or unparseable file, certificates that do not chain.
func LoadPKI(pems map[string][]byte, leaves ...*x509.Certificate) (*PKI, error) {
	p := &PKI{}
	for _, f := range []struct {
		name string
		k    *crypto.Signer
		c    **x509.Certificate
	}{{PEMRoot, &p.RootKey, &p.Root}, {PEMCA, &p.CAKey, &p.CA}, {PEMTSA, &p.TSAKey, &p.TSA}} {
		k, c, err := decodePEM(pems[f.name])
		if err != nil {
			return nil, fmt.Errorf("dev PKI %s: %w", f.name, err)
		}
		*f.k, *f.c = k, c
	}
	if err := p.CA.CheckSignatureFrom(p.Root); err != nil {
		return nil, fmt.Errorf("dev PKI: the issuing CA is not signed by the root: %w", err)
	}
	if len(p.CA.CRLDistributionPoints) != 1 || !strings.HasSuffix(p.CA.CRLDistributionPoints[0], PathCRL) {
		return nil, errors.New("dev PKI: the issuing CA names no CRL of this PKI")
	}
	p.BaseURL = strings.TrimSuffix(p.CA.CRLDistributionPoints[0], PathCRL)
	for _, c := range append([]*x509.Certificate{p.TSA}, leaves...) {
		if err := c.CheckSignatureFrom(p.CA); err != nil {
			return nil, fmt.Errorf("dev PKI: %q is not issued by the issuing CA: %w", c.Subject.CommonName, err)
		}
		p.Register(c)
	}
	return p, nil
}

func decodePEM(b []byte) (crypto.Signer, *x509.Certificate, error) {
	var key crypto.Signer
	var cert *x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		switch blk.Type {
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
			if err != nil {
				return nil, nil, err
			}
			s, ok := k.(crypto.Signer)
			if !ok {
				return nil, nil, errors.New("key cannot sign")
			}
			key = s
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				return nil, nil, err
			}
			cert = c
		}
	}
	if key == nil || cert == nil {
		return nil, nil, errors.New("want a PRIVATE KEY and a CERTIFICATE block")
	}
	return key, cert, nil
}
