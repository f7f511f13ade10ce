// Package verify checks a sealed PDF and its evidence bundle offline, the way a relying party
// would: the PAdES signature (ByteRange covering the whole file but /Contents, digest, CMS
// signature, ESS signing-certificate-v2, signer certificate against optional trust anchors,
// the optional RFC 3161 timestamp), the DocMDP certification, the bundle's hash chain, and that
// the evidence head hash stored in the signed document equals the bundle's head.
//
// The head hash is read from the document information dictionary (key
// certificate.InfoKeyEvidenceHead), which the signature covers, so no text extraction is
// needed; the certificate pages print the same value for human readers.
package verify

import (
	"bytes"
	"crypto/subtle"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/evidence"
	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/cms"
)

func init() { api.DisableConfigDir() }

// ErrInvalid wraps every verification failure; the message says what failed.
var ErrInvalid = errors.New("verification failed")

func fail(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// Result describes a successful verification.
type Result struct {
	Signer        *x509.Certificate
	SubFilter     string
	DocMDP        int        // the /P of the certification
	SigningTime   string     // /M as written
	TimestampTime *time.Time // genTime of the timestamp token, when present
	Trusted       bool       // the signer chains to one of the trust anchors
	EvidenceHead  string     // from the signed document
	BundleHead    string
	BundleLines   int
}

// Options of Verify. Trust empty means the signer certificate is reported, not trusted.
type Options struct {
	Trust  []*x509.Certificate
	Bundle io.Reader // nil: the bundle is not checked
}

// Verify checks pdf (and the bundle, when given). Errors wrap ErrInvalid, or
// *evidence.LineError for a bad bundle line.
func Verify(pdf []byte, o Options) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fail("malformed PDF (%v)", r)
		}
	}()
	return verifyPDF(pdf, o)
}

func verifyPDF(pdf []byte, o Options) (*Result, error) {
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	ctx, err := api.ReadContext(bytes.NewReader(pdf), conf)
	if err != nil {
		return nil, fail("not a readable PDF: %v", err)
	}
	cat, err := ctx.Catalog()
	if err != nil {
		return nil, fail("no catalog: %v", err)
	}
	res := &Result{}
	sig, err := seal(ctx, cat, len(pdf))
	if err != nil {
		return nil, err
	}
	if _, certified := cat["Perms"]; certified {
		if res.DocMDP, err = docMDP(ctx, sig); err != nil {
			return nil, err
		}
	}
	if sf := sig.NameEntry("SubFilter"); sf != nil {
		res.SubFilter = *sf
	}
	if res.SubFilter != "ETSI.CAdES.detached" {
		return nil, fail("SubFilter is %q, want ETSI.CAdES.detached", res.SubFilter)
	}
	if m, ok := sig["M"].(types.StringLiteral); ok {
		res.SigningTime = m.Value()
	}
	contents, signed, err := byteRange(ctx, sig, pdf)
	if err != nil {
		return nil, err
	}
	s, err := cms.Verify(contents, signed)
	if err != nil {
		return nil, fail("signature: %v", err)
	}
	if !s.HasSigningCertV2 {
		return nil, fail("signature: no ESS signing-certificate-v2 attribute (required by PAdES)")
	}
	res.Signer = s.Signer
	at := time.Now()
	if s.TimeStampToken != nil {
		info, _, err := cms.VerifyTimestamp(s.TimeStampToken, s.Signature)
		if err != nil {
			return nil, fail("timestamp: %v", err)
		}
		t := info.GenTime
		res.TimestampTime, at = &t, t
	}
	if len(o.Trust) > 0 {
		roots, inter := x509.NewCertPool(), x509.NewCertPool()
		for _, c := range o.Trust {
			roots.AddCert(c)
		}
		for _, c := range s.Certificates {
			inter.AddCert(c)
		}
		if _, err := s.Signer.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			return nil, fail("signer certificate %q is not trusted: %v", s.Signer.Subject.String(), err)
		}
		res.Trusted = true
	}
	if ctx.Info != nil {
		if info, err := ctx.DereferenceDict(*ctx.Info); err == nil && info != nil {
			if v, err := ctx.DereferenceStringOrHexLiteral(info[certificate.InfoKeyEvidenceHead], model.V10, nil); err == nil {
				res.EvidenceHead = v
			}
		}
	}
	if o.Bundle != nil {
		head, n, err := evidence.Verify(o.Bundle)
		if err != nil {
			return nil, err
		}
		res.BundleHead, res.BundleLines = head, n
		if res.EvidenceHead == "" {
			return nil, fail("the document holds no evidence head hash (/Info /%s)", certificate.InfoKeyEvidenceHead)
		}
		if subtle.ConstantTimeCompare([]byte(head), []byte(res.EvidenceHead)) != 1 {
			return nil, fail("evidence head hash in the document (%s) differs from the bundle's head (%s)", res.EvidenceHead, head)
		}
	}
	return res, nil
}

func docMDP(ctx *model.Context, sig types.Dict) (int, error) {
	refs, err := ctx.DereferenceArray(sig["Reference"])
	if err != nil {
		return 0, fail("signature /Reference: %v", err)
	}
	for _, r := range refs {
		d, err := ctx.DereferenceDict(r)
		if err != nil || d == nil {
			continue
		}
		if tm := d.NameEntry("TransformMethod"); tm == nil || *tm != "DocMDP" {
			continue
		}
		tp, err := ctx.DereferenceDict(d["TransformParams"])
		if err != nil || tp == nil {
			return 0, fail("DocMDP reference without /TransformParams")
		}
		p := 2
		if v := tp.IntEntry("P"); v != nil {
			p = *v
		}
		if p < 1 || p > 3 {
			return 0, fail("DocMDP /P %d out of range", p)
		}
		return p, nil
	}
	return 0, fail("the certification signature has no DocMDP /Reference")
}

// byteRange checks /ByteRange against the file and returns the decoded /Contents and the
// signed bytes.
func byteRange(ctx *model.Context, sig types.Dict, pdf []byte) ([]byte, []byte, error) {
	arr, err := ctx.DereferenceArray(sig["ByteRange"])
	if err != nil || len(arr) != 4 {
		return nil, nil, fail("/ByteRange missing or not four numbers")
	}
	var br [4]int
	for i, o := range arr {
		n, ok := o.(types.Integer)
		if !ok || n < 0 {
			return nil, nil, fail("/ByteRange holds a non-integer")
		}
		br[i] = int(n)
	}
	size := len(pdf)
	if br[0] != 0 || br[1] <= 0 || br[2] <= br[1]+1 || br[2] > size || br[3] != size-br[2] {
		return nil, nil, fail("/ByteRange %v does not cover the whole file (%d bytes) but /Contents", br, size)
	}
	gap := pdf[br[1]:br[2]]
	if gap[0] != '<' || gap[len(gap)-1] != '>' {
		return nil, nil, fail("/ByteRange gap is not exactly the /Contents hex string")
	}
	contents, err := hex.DecodeString(string(gap[1 : len(gap)-1]))
	if err != nil {
		return nil, nil, fail("/Contents is not hex")
	}
	hl, ok := sig["Contents"].(types.HexLiteral)
	if !ok {
		return nil, nil, fail("/Contents is not a hex string")
	}
	if declared, err := hl.Bytes(); err != nil || !bytes.Equal(declared, contents) {
		return nil, nil, fail("/ByteRange gap is not the signature's /Contents")
	}
	signed := make([]byte, 0, br[1]+br[3])
	signed = append(append(signed, pdf[:br[1]]...), pdf[br[2]:]...)
	return contents, signed, nil
}

// seal is the signature to verify: the DocMDP certification of a certified document; else (a
// sealed workflow record that was signed next carries approval signatures only) the signature
// whose /ByteRange ends at the end of the file, the last revision's.
func seal(ctx *model.Context, cat types.Dict, size int) (types.Dict, error) {
	if _, certified := cat["Perms"]; certified {
		perms, err := ctx.DereferenceDict(cat["Perms"])
		if err != nil || perms == nil {
			return nil, fail("the document is not certified: /Perms is not a dictionary")
		}
		sig, err := ctx.DereferenceDict(perms["DocMDP"])
		if err != nil || sig == nil {
			return nil, fail("the document is not certified: /Perms has no /DocMDP signature")
		}
		return sig, nil
	}
	af, err := ctx.DereferenceDict(cat["AcroForm"])
	if err != nil || af == nil {
		return nil, fail("the document is not sealed: no certification and no signature field")
	}
	fields, err := ctx.DereferenceArray(af["Fields"])
	if err != nil {
		return nil, fail("the document's /AcroForm /Fields is not an array")
	}
	for _, f := range fields {
		fd, err := ctx.DereferenceDict(f)
		if err != nil || fd == nil || fd.NameEntry("FT") == nil || *fd.NameEntry("FT") != "Sig" {
			continue
		}
		sig, err := ctx.DereferenceDict(fd["V"])
		if err != nil || sig == nil {
			continue
		}
		br, err := ctx.DereferenceArray(sig["ByteRange"])
		if err != nil || len(br) != 4 {
			continue
		}
		if a, ok := br[2].(types.Integer); ok {
			if b, ok := br[3].(types.Integer); ok && int(a)+int(b) == size {
				return sig, nil
			}
		}
	}
	return nil, fail("the document is not sealed: no certification and no signature over the whole file")
}
