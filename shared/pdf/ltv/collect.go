// Package ltv is the long-term validation data of a sealed PDF (PAdES B-LT and B-LTA, ETSI EN
// 319 142-1, DESIGN 15): it reads a document's signatures, document timestamps and DSS (Read),
// builds a certificate's chain (Collector.Chain, offline or through caIssuers), collects fresh
// revocation data for every certificate of the chains (Collector.Collect: OCSP, else a CRL, from
// the addresses the certificates name), and names the levels (Level). Writing the DSS and the
// archive timestamp is pades.AddDSS and pades.TimestampDoc, driven by pdf.Extend.
package ltv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"golang.org/x/crypto/ocsp"
)

// ErrRevocation wraps every failure to collect validation data: an issuer or a revocation
// answer that cannot be had, or a certificate that is revoked.
var ErrRevocation = errors.New("ltv: validation data")

// ValidationData is what a DSS holds: DER certificates, OCSP responses (the whole
// OCSPResponse) and CRLs.
type ValidationData struct {
	Certs, OCSPs, CRLs [][]byte
}

// Collector fetches issuer certificates (caIssuers), OCSP responses and CRLs over HTTP.
type Collector struct {
	HTTP *http.Client // nil: a client with a 15 s timeout
	Now  func() time.Time
	// Offline makes Chain use the known certificates only (a verifier's offline check).
	Offline bool
}

const maxFetch = 4 << 20

// Leaf is a signer certificate and when it was used: the time of its signature's (or its
// own) timestamp; zero for a signature without one. A revocation that came after UsedAt does
// not void what was signed before it (the answer that says so is kept as evidence); one before
// it, or any for a zero UsedAt, fails the collection.
type Leaf struct {
	Cert   *x509.Certificate
	UsedAt time.Time
}

// Collect returns every certificate of the chains of leaves (issuers found among known, else
// fetched from the caIssuers address; up to a self-signed root) and one revocation answer for
// each certificate but the roots: OCSP when the certificate names a responder, else its CRL.
// Errors wrap ErrRevocation: an issuer not found, no revocation address, a responder or CRL
// that does not answer, an answer that does not verify, a certificate unknown or revoked
// before it was used (see Leaf).
func (c Collector) Collect(ctx context.Context, leaves []Leaf, known []*x509.Certificate) (ValidationData, error) {
	var v ValidationData
	type entry struct {
		cert, issuer *x509.Certificate
		usedAt       time.Time // the latest use of the certificate; zero: strict
		strict       bool
	}
	var order [][32]byte
	entries := map[[32]byte]*entry{}
	for _, leaf := range leaves {
		chain, err := c.Chain(ctx, leaf.Cert, known)
		if err != nil {
			return v, err
		}
		for i, cert := range chain {
			h := sha256.Sum256(cert.Raw)
			e, ok := entries[h]
			if !ok {
				e = &entry{cert: cert}
				if i < len(chain)-1 {
					e.issuer = chain[i+1]
				}
				entries[h] = e
				order = append(order, h)
			}
			if leaf.UsedAt.IsZero() {
				e.strict = true
			} else if leaf.UsedAt.After(e.usedAt) {
				e.usedAt = leaf.UsedAt
			}
		}
	}
	for _, h := range order {
		e := entries[h]
		v.Certs = append(v.Certs, e.cert.Raw)
		if e.issuer == nil {
			continue // the root: a trust anchor, not revoked by anyone
		}
		usedAt := e.usedAt
		if e.strict {
			usedAt = time.Time{}
		}
		if err := c.revocation(ctx, e.cert, e.issuer, usedAt, &v); err != nil {
			return v, err
		}
	}
	return v, nil
}

// Chain is leaf's chain up to a self-signed certificate, issuers taken from known or fetched
// from the caIssuers address each certificate names. Errors wrap ErrRevocation.
func (c Collector) Chain(ctx context.Context, leaf *x509.Certificate, known []*x509.Certificate) ([]*x509.Certificate, error) {
	chain := []*x509.Certificate{leaf}
	for cur := leaf; len(chain) < 10; {
		if bytes.Equal(cur.RawIssuer, cur.RawSubject) && cur.CheckSignatureFrom(cur) == nil {
			return chain, nil
		}
		issuer := findIssuer(cur, known)
		for _, u := range cur.IssuingCertificateURL {
			if issuer != nil || c.Offline {
				break
			}
			der, err := c.get(ctx, u)
			if err != nil {
				continue
			}
			if cand, err := x509.ParseCertificate(der); err == nil && cur.CheckSignatureFrom(cand) == nil {
				issuer = cand
			}
		}
		if issuer == nil {
			return nil, fmt.Errorf("%w: the issuer of %q is neither in the document nor at its caIssuers address", ErrRevocation, cur.Subject.String())
		}
		chain = append(chain, issuer)
		cur = issuer
	}
	return nil, fmt.Errorf("%w: the chain of %q is longer than ten certificates", ErrRevocation, leaf.Subject.String())
}

func findIssuer(c *x509.Certificate, pool []*x509.Certificate) *x509.Certificate {
	for _, p := range pool {
		if bytes.Equal(p.RawSubject, c.RawIssuer) && c.CheckSignatureFrom(p) == nil {
			return p
		}
	}
	return nil
}

func (c Collector) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c Collector) revocation(ctx context.Context, cert, issuer *x509.Certificate, usedAt time.Time, v *ValidationData) error {
	name := cert.Subject.String()
	var errs []error
	for _, u := range cert.OCSPServer {
		der, err := c.ocsp(ctx, u, cert, issuer, usedAt)
		if err == nil {
			v.OCSPs = append(v.OCSPs, der)
			return nil
		}
		errs = append(errs, err)
	}
	for _, u := range cert.CRLDistributionPoints {
		der, err := c.crl(ctx, u, cert, issuer, usedAt)
		if err == nil {
			v.CRLs = append(v.CRLs, der)
			return nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return fmt.Errorf("%w: %q names no OCSP responder and no CRL", ErrRevocation, name)
	}
	return fmt.Errorf("%w: no revocation answer for %q: %v", ErrRevocation, name, errors.Join(errs...))
}

func (c Collector) ocsp(ctx context.Context, url string, cert, issuer *x509.Certificate, usedAt time.Time) ([]byte, error) {
	req, err := ocsp.CreateRequest(cert, issuer, nil)
	if err != nil {
		return nil, err
	}
	der, err := c.do(ctx, http.MethodPost, url, req)
	if err != nil {
		return nil, fmt.Errorf("OCSP %s: %w", url, err)
	}
	resp, err := ocsp.ParseResponseForCert(der, cert, issuer)
	if err != nil {
		return nil, fmt.Errorf("OCSP %s: %w", url, err)
	}
	if err := CheckOCSP(resp, c.now(), usedAt); err != nil {
		return nil, fmt.Errorf("OCSP %s: %w", url, err)
	}
	return der, nil
}

// CheckOCSP accepts a verified response current at t (thisUpdate at most five minutes ahead,
// nextUpdate, when set, not before t) that says good, or revoked after usedAt (not zero).
func CheckOCSP(resp *ocsp.Response, t, usedAt time.Time) error {
	switch resp.Status {
	case ocsp.Good:
	case ocsp.Revoked:
		if usedAt.IsZero() || !resp.RevokedAt.After(usedAt) {
			return fmt.Errorf("the certificate is revoked since %s", resp.RevokedAt.UTC().Format(time.RFC3339))
		}
	default:
		return errors.New("the responder does not know the certificate")
	}
	if resp.ThisUpdate.After(t.Add(5 * time.Minute)) {
		return errors.New("the response is from the future")
	}
	if !resp.NextUpdate.IsZero() && resp.NextUpdate.Before(t) {
		return errors.New("the response is stale (nextUpdate passed)")
	}
	return nil
}

func (c Collector) crl(ctx context.Context, url string, cert, issuer *x509.Certificate, usedAt time.Time) ([]byte, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("CRL %s: not an http(s) address", url)
	}
	der, err := c.get(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("CRL %s: %w", url, err)
	}
	if err := CheckCRL(der, cert, issuer, c.now(), usedAt); err != nil {
		return nil, fmt.Errorf("CRL %s: %w", url, err)
	}
	return der, nil
}

// CheckCRL accepts a CRL signed by issuer, current at t, that does not list cert, or lists it
// revoked after usedAt (not zero).
func CheckCRL(der []byte, cert, issuer *x509.Certificate, t, usedAt time.Time) error {
	rl, err := x509.ParseRevocationList(der)
	if err != nil {
		return err
	}
	if err := rl.CheckSignatureFrom(issuer); err != nil {
		return fmt.Errorf("not signed by the issuer: %w", err)
	}
	if !rl.NextUpdate.IsZero() && rl.NextUpdate.Before(t) {
		return errors.New("the CRL is stale (nextUpdate passed)")
	}
	for _, e := range rl.RevokedCertificateEntries {
		if e.SerialNumber.Cmp(cert.SerialNumber) == 0 && (usedAt.IsZero() || !e.RevocationTime.After(usedAt)) {
			return fmt.Errorf("the certificate is revoked since %s", e.RevocationTime.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

func (c Collector) get(ctx context.Context, url string) ([]byte, error) {
	return c.do(ctx, http.MethodGet, url, nil)
}

func (c Collector) do(ctx context.Context, method, url string, body []byte) ([]byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/ocsp-request")
	}
	client := c.HTTP
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFetch+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFetch {
		return nil, errors.New("answer larger than 4 MiB")
	}
	return b, nil
}
