// Package pades seals a PDF with a PAdES baseline signature: SubFilter ETSI.CAdES.detached,
// written as an incremental update (the input bytes are untouched), an invisible signature
// field and widget on page 1, /ByteRange over the whole file but the /Contents value, and a
// DocMDP certification (P 1: no further changes allowed), unless the seal is an approval
// signature: asked for (a sealed record that is signed next), or on a document that carries a
// signature already (a certification must be a document's first signature). The CMS comes from package cms and
// is produced through a crypto.Signer so that a Key Vault key can sign; an optional RFC 3161
// timestamp is added as signature-time-stamp-token.
package pades

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/cms"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// FieldName is the name of the seal's signature field.
const FieldName = "esign_seal"

// TimestampFieldName is the name of a document timestamp's field (TimestampDoc), with _2, _3...
// for the renewals.
const TimestampFieldName = "esign_archive"

// Options describes the seal.
type Options struct {
	Signer crypto.Signer
	Chain  []*x509.Certificate // signer certificate first
	// TSAURL, when set, adds an RFC 3161 timestamp from this authority.
	TSAURL string
	TSA    *cms.TSAClient // optional client; overrides TSAURL
	Name   string         // /Name, e.g. the organisation sealing
	Reason string
	// Time is the claimed signing time written as /M (PAdES puts it there, not in the CMS);
	// zero means now.
	Time time.Time
	// Info, when set, becomes the trailer's /Info.
	Info *types.IndirectRef
	// Approval seals without the DocMDP certification, so that later revisions may sign the
	// document again. A document that carries a signature is always sealed so.
	Approval bool
	// DocMDP is the certification's /P: 1 (the default) allows no change at all, 2 allows
	// filling in forms and signing, which a B-LT/B-LTA seal needs for its DSS and document
	// timestamp revisions (Acrobat reads P 1 as "not one more byte").
	DocMDP int
	// docTimestamp makes the signature a document timestamp (TimestampDoc).
	docTimestamp bool
}

// ErrContentsTooSmall is returned when the CMS does not fit the reserved /Contents space.
var ErrContentsTooSmall = errors.New("pades: signature larger than the reserved space")

// SignPDF seals src. Errors: apperr invalid for unreadable or encrypted input, the errors of
// SignDoc.
func SignPDF(ctx context.Context, src []byte, o Options) ([]byte, error) {
	d, err := pdfdoc.Open(src)
	if err != nil {
		return nil, err
	}
	return SignDoc(ctx, d, o)
}

// SignDoc adds the seal to d's incremental update (which may already hold other changes) and
// returns the signed file: d.Base() followed by the update, allocated once; the digest is
// computed over the two parts without joining them. d is released (pdfdoc.Doc.Release) once
// the update is serialised and must not be used afterwards. Errors: cms.ErrUnsupportedKey, cms.ErrTimestamp, ErrContentsTooSmall,
// context cancellation, and the signer's own errors.
func SignDoc(ctx context.Context, d *pdfdoc.Doc, o Options) ([]byte, error) {
	if o.Signer == nil || len(o.Chain) == 0 {
		return nil, errors.New("pades: signer and certificate chain are required")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	reserve := 8192 + 2*1024
	for _, c := range o.Chain {
		reserve += len(c.Raw)
	}
	tsa := o.TSA
	if tsa == nil && o.TSAURL != "" {
		tsa = &cms.TSAClient{URL: o.TSAURL}
	}
	if tsa != nil {
		reserve += 24 * 1024
	}
	base := d.Base()
	upd, br, err := prepare(d, o, reserve)
	if err != nil {
		return nil, err
	}
	// The parsed source and the pending objects are no longer needed: let them go before the
	// signer runs and the output is allocated.
	d.Release()
	digest := digestParts(base, upd, br)
	so := cms.SignOptions{Signer: o.Signer, Chain: o.Chain, ContentDigest: digest[:]}
	if tsa != nil {
		so.Timestamp = tsa.Timestamp
	}
	sig, err := cms.Sign(ctx, so)
	if err != nil {
		return nil, err
	}
	if 2*len(sig) > br[2]-br[1]-2 {
		return nil, fmt.Errorf("%w: %d bytes, %d reserved", ErrContentsTooSmall, len(sig), (br[2]-br[1]-2)/2)
	}
	hexEncode(upd[br[1]+1-len(base):], sig)
	return pdfdoc.Join(base, upd), nil
}

func hexEncode(dst, src []byte) { hex.Encode(dst, src) }

// placeholder values, replaced after serialisation; widths are kept by padding.
const brPlaceholder = 9999999999

// prepare writes the signature objects and returns the serialised update (the file is
// d.Base() followed by it) with the /ByteRange filled in, and the byte range [0, a, b, rest]
// in file offsets (a..b is the "<...>" of /Contents, which lies in the update).
func prepare(d *pdfdoc.Doc, o Options, reserve int) ([]byte, [4]int, error) {
	var br [4]int
	cat, catRef, err := d.Catalog()
	if err != nil {
		return nil, br, err
	}
	cat = cat.Clone().(types.Dict)
	if _, ok := cat["Perms"]; ok && !o.docTimestamp {
		return nil, br, errors.New("pades: the document is already certified (/Perms present)")
	}
	when := o.Time
	if when.IsZero() {
		when = time.Now()
	}
	af, err := d.DerefDict(cat["AcroForm"])
	if err != nil {
		return nil, br, err
	}
	if af == nil {
		af = types.Dict{}
	} else {
		af = af.Clone().(types.Dict)
	}
	fv, err := d.Deref(af["Fields"])
	if err != nil {
		return nil, br, err
	}
	fields, _ := fv.(types.Array)
	base := FieldName
	if o.docTimestamp {
		base = TimestampFieldName
	}
	name, signed, err := fieldName(d, fields, base)
	if err != nil {
		return nil, br, err
	}
	certify := !o.Approval && !signed && !o.docTimestamp
	sigRef := d.Alloc()
	sigDict := types.Dict{
		"Type":      types.Name("Sig"),
		"Filter":    types.Name("Adobe.PPKLite"),
		"SubFilter": types.Name("ETSI.CAdES.detached"),
		"ByteRange": types.Array{types.Integer(0), types.Integer(brPlaceholder), types.Integer(brPlaceholder), types.Integer(brPlaceholder)},
		"Contents":  types.HexLiteral(bytes.Repeat([]byte("0"), 2*reserve)),
		"M":         types.StringLiteral(pdfDate(when)),
	}
	if o.docTimestamp {
		sigDict["Type"], sigDict["SubFilter"] = types.Name("DocTimeStamp"), types.Name("ETSI.RFC3161")
		delete(sigDict, "M")
	}
	if certify {
		p := o.DocMDP
		if p == 0 {
			p = 1
		}
		if p < 1 || p > 3 {
			return nil, br, fmt.Errorf("pades: DocMDP /P %d out of range", p)
		}
		sigDict["Reference"] = types.Array{types.Dict{
			"Type":            types.Name("SigRef"),
			"TransformMethod": types.Name("DocMDP"),
			"TransformParams": types.Dict{"Type": types.Name("TransformParams"), "P": types.Integer(p), "V": types.Name("1.2")},
		}}
	}
	if o.Name != "" {
		sigDict["Name"] = types.StringLiteral(types.EncodeUTF16String(o.Name))
	}
	if o.Reason != "" {
		sigDict["Reason"] = types.StringLiteral(types.EncodeUTF16String(o.Reason))
	}
	d.Set(sigRef, sigDict)

	first, err := d.Page(1)
	if err != nil {
		return nil, br, err
	}
	widget := d.Add(types.Dict{
		"Type": types.Name("Annot"), "Subtype": types.Name("Widget"), "FT": types.Name("Sig"),
		"T": types.StringLiteral(name), "V": sigRef, "Rect": types.NewNumberArray(0, 0, 0, 0),
		"F": types.Integer(132), "P": first.Ref,
	})
	annots, err := d.Deref(first.Dict["Annots"])
	if err != nil {
		return nil, br, err
	}
	aa, _ := annots.(types.Array)
	first.Dict["Annots"] = append(append(types.Array{}, aa...), widget)
	d.Set(first.Ref, first.Dict)

	af["Fields"] = append(append(types.Array{}, fields...), widget)
	af["SigFlags"] = types.Integer(3)
	if r, ok := cat["AcroForm"].(types.IndirectRef); ok {
		d.Set(r, af)
	} else {
		cat["AcroForm"] = af
	}
	if certify {
		cat["Perms"] = types.Dict{"DocMDP": sigRef}
	}
	d.Set(catRef, cat)

	upd, err := d.Update(o.Info)
	if err != nil {
		return nil, br, err
	}
	n := len(d.Base())
	start := bytes.LastIndex(upd, []byte(fmt.Sprintf("\n%d %d obj\n", sigRef.ObjectNumber.Value(), 0)))
	if start < 0 {
		return nil, br, errors.New("pades: signature object not found after writing")
	}
	end := start + bytes.Index(upd[start:], []byte("endobj"))
	obj := upd[start:end]
	ci := bytes.Index(obj, []byte("/Contents<"))
	bi := bytes.Index(obj, []byte("/ByteRange["))
	if ci < 0 || bi < 0 {
		return nil, br, errors.New("pades: /Contents or /ByteRange not found after writing")
	}
	a := start + ci + len("/Contents")
	b := a + bytes.IndexByte(upd[a:], '>') + 1
	br = [4]int{0, n + a, n + b, len(upd) - b}
	arrStart := start + bi + len("/ByteRange")
	arrEnd := arrStart + bytes.IndexByte(upd[arrStart:], ']') + 1
	text := fmt.Sprintf("[%d %d %d %d]", br[0], br[1], br[2], br[3])
	if len(text) > arrEnd-arrStart {
		return nil, br, errors.New("pades: /ByteRange placeholder too small")
	}
	copy(upd[arrStart:arrEnd], text+string(bytes.Repeat([]byte(" "), arrEnd-arrStart-len(text))))
	return upd, br, nil
}

func pdfDate(t time.Time) string {
	t = t.UTC()
	return "D:" + t.Format("20060102150405") + "+00'00'"
}

// digestParts is the SHA-256 over the byte ranges of the signed file base||upd, without
// joining the two: br is
// [0, a, b, rest] with a and b inside upd.
func digestParts(base, upd []byte, br [4]int) [32]byte {
	n := len(base)
	h := sha256.New()
	h.Write(base)
	h.Write(upd[:br[1]-n])
	h.Write(upd[br[2]-n : br[2]-n+br[3]])
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// fieldName is the seal's field name, FieldName unless a top-level field has it already (then
// FieldName_2, _3...), and whether a top-level signature field carries a signature.
func fieldName(d *pdfdoc.Doc, fields types.Array, base string) (string, bool, error) {
	taken := map[string]bool{}
	signed := false
	for _, f := range fields {
		fd, err := d.DerefDict(f)
		if err != nil {
			return "", false, err
		}
		if t, ok := fd["T"].(types.StringLiteral); ok {
			taken[string(t)] = true
		}
		if ft, ok := fd["FT"].(types.Name); ok && ft == "Sig" && fd["V"] != nil {
			signed = true
		}
	}
	name := base
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	return name, signed, nil
}
