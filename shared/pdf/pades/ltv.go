package pades

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/cms"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// AddDSS adds DER certificates, OCSP responses (whole OCSPResponses) and CRLs to the catalog's
// /DSS (ETSI EN 319 142-1 5.4.2, ISO 32000-2 12.8.4.3) in d's update, after the entries a DSS
// of the document already holds (the arrays grow; nothing is removed). Items whose SHA-256 is
// in known (the document's DSS content, when the caller read it) or repeated are written once.
// Errors: the document's catalog or DSS cannot be read.
func AddDSS(d *pdfdoc.Doc, certs, ocsps, crls [][]byte, known map[[32]byte]bool) error {
	cat, catRef, err := d.Catalog()
	if err != nil {
		return err
	}
	cat = cat.Clone().(types.Dict)
	dss, err := d.DerefDict(cat["DSS"])
	if err != nil {
		return err
	}
	if dss == nil {
		dss = types.Dict{"Type": types.Name("DSS")}
	} else {
		dss = dss.Clone().(types.Dict)
	}
	seen := map[[32]byte]bool{}
	for k := range known {
		seen[k] = true
	}
	for _, part := range []struct {
		key   string
		items [][]byte
	}{{"Certs", certs}, {"OCSPs", ocsps}, {"CRLs", crls}} {
		old, err := d.Deref(dss[part.key])
		if err != nil {
			return err
		}
		arr, _ := old.(types.Array)
		arr = append(types.Array{}, arr...)
		for _, der := range part.items {
			h := sha256.Sum256(der)
			if seen[h] {
				continue
			}
			seen[h] = true
			arr = append(arr, d.AddStream(pdfdoc.Stream{Dict: types.Dict{}, Data: der}))
		}
		if len(arr) > 0 {
			dss[part.key] = arr
		}
	}
	if r, ok := cat["DSS"].(types.IndirectRef); ok {
		d.Set(r, dss)
	} else {
		cat["DSS"] = d.Add(dss)
	}
	d.Set(catRef, cat)
	return nil
}

// TimestampDoc adds a document timestamp (/Type /DocTimeStamp, SubFilter ETSI.RFC3161: an RFC
// 3161 token over the byte ranges, ETSI EN 319 142-1 5.4.3) to d's update and returns the
// file; d is released as by SignDoc. Errors: cms.ErrTimestamp, ErrContentsTooSmall, context
// cancellation.
func TimestampDoc(ctx context.Context, d *pdfdoc.Doc, tsa *cms.TSAClient) ([]byte, error) {
	if tsa == nil {
		return nil, errors.New("pades: a document timestamp needs a TSA")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	base := d.Base()
	upd, br, err := prepare(d, Options{docTimestamp: true, Approval: true}, 12*1024)
	if err != nil {
		return nil, err
	}
	d.Release()
	digest := digestParts(base, upd, br)
	tok, err := tsa.TimestampDigest(ctx, digest[:])
	if err != nil {
		return nil, err
	}
	if 2*len(tok) > br[2]-br[1]-2 {
		return nil, fmt.Errorf("%w: %d bytes, %d reserved", ErrContentsTooSmall, len(tok), (br[2]-br[1]-2)/2)
	}
	hexEncode(upd[br[1]+1-len(base):], tok)
	return pdfdoc.Join(base, upd), nil
}
