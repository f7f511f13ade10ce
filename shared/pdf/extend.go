package pdf

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/pdf/cms"
	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/pdf/pades"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// extendOptions of extendLTV.
type extendOptions struct {
	Collector ltv.Collector
	// TSA adds the archive document timestamp after the DSS (B-LTA); nil stops at B-LT.
	TSA *cms.TSAClient
}

// extendLTV appends to a signed PDF, each as an incremental update, a DSS with the chains of
// every signature and timestamp in it and a revocation answer for each of their certificates,
// then (with o.TSA) a document timestamp over the whole file. On a B-LTA document it is the
// renewal: the chain and revocation data of the last archive timestamp, and a new timestamp.
// Errors: apperr invalid "pdf_unreadable" for a file without signatures or that cannot be
// updated without rewriting; ltv.ErrRevocation; cms.ErrTimestamp; context cancellation.
func extendLTV(ctx context.Context, pdf []byte, o extendOptions) ([]byte, error) {
	doc, err := ltv.Read(pdf)
	if err != nil {
		return nil, apperr.Invalid(pdfdoc.CodeUnreadable, apperr.Field("pdf", err.Error()))
	}
	leaves, pool, err := signers(doc)
	if err != nil {
		return nil, err
	}
	v, err := o.Collector.Collect(ctx, leaves, append(pool, doc.DSS.Certs...))
	if err != nil {
		return nil, err
	}
	d, err := pdfdoc.Open(pdf)
	if err != nil {
		return nil, err
	}
	if d.Rewritten {
		return nil, apperr.Invalid(pdfdoc.CodeUnreadable, apperr.Field("pdf", "the signed file's last cross-reference section cannot be located"))
	}
	if err := pades.AddDSS(d, v.Certs, v.OCSPs, v.CRLs, doc.DSS.Hashes); err != nil {
		return nil, err
	}
	out, err := d.Bytes(nil)
	if err != nil {
		return nil, err
	}
	d.Release()
	if o.TSA == nil {
		return out, nil
	}
	d, err = pdfdoc.Open(out)
	if err != nil {
		return nil, err
	}
	return pades.TimestampDoc(ctx, d, o.TSA)
}

// signers returns the signer certificate of every signature, signature timestamp and document
// timestamp in doc, each with the time it was used (ltv.Leaf), and every certificate their CMS
// carry.
func signers(doc *ltv.Document) ([]ltv.Leaf, []*x509.Certificate, error) {
	if len(doc.Signatures) == 0 {
		return nil, nil, apperr.Invalid(pdfdoc.CodeUnreadable, apperr.Field("pdf", "the document carries no signature"))
	}
	var leaves []ltv.Leaf
	var pool []*x509.Certificate
	bad := func(field string, err error) error {
		return apperr.Invalid(pdfdoc.CodeUnreadable, apperr.Field("pdf", fmt.Sprintf("signature %q: %v", field, err)))
	}
	inspect := func(field string, der []byte) (*cms.Signed, error) {
		s, err := cms.Inspect(der)
		if err != nil {
			return nil, bad(field, err)
		}
		if s.Signer == nil {
			return nil, bad(field, errors.New("its signer certificate is not in the CMS"))
		}
		pool = append(pool, s.Certificates...)
		return s, nil
	}
	for _, sig := range doc.Signatures {
		s, err := inspect(sig.Field, sig.Contents)
		if err != nil {
			return nil, nil, err
		}
		tokenDER := s.TimeStampToken
		if sig.IsDocTimestamp() {
			tokenDER = sig.Contents
		}
		var at time.Time
		if tokenDER != nil {
			if at, err = cms.TimestampTime(tokenDER); err != nil {
				return nil, nil, bad(sig.Field, err)
			}
		}
		leaves = append(leaves, ltv.Leaf{Cert: s.Signer, UsedAt: at})
		if s.TimeStampToken != nil {
			tok, err := inspect(sig.Field, s.TimeStampToken)
			if err != nil {
				return nil, nil, err
			}
			leaves = append(leaves, ltv.Leaf{Cert: tok.Signer, UsedAt: at})
		}
	}
	return leaves, pool, nil
}
