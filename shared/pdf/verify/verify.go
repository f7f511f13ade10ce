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
	"context"
	"crypto/subtle"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"

	"golang.org/x/crypto/ocsp"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/evidence"
	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/cms"
	"github.com/esign-svc/esign/shared/pdf/ltv"
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
	TimestampTime *time.Time // genTime of the seal's signature timestamp, when present
	Trusted       bool       // the signer chains to one of the trust anchors
	EvidenceHead  string     // from the signed document
	BundleHead    string
	BundleLines   int

	// Level is the PAdES baseline level the document reaches (ETSI EN 319 142-1): B-B, B-T
	// with a timestamp, B-LT when the DSS holds the chains and a revocation answer for every
	// certificate of the seal and of its timestamp, B-LTA when an archive document timestamp
	// covers that DSS and ends the file.
	Level ltv.Level
	// Signatures lists every signature and document timestamp, in file order, each checked.
	Signatures []Checked
	// ArchiveExpires is when the last archive timestamp's certificate expires: the evidence
	// must be renewed (a new document timestamp) before then.
	ArchiveExpires *time.Time
	// Warnings are findings that do not fail the verification.
	Warnings []string
	// Renewals counts the bundle's RenewalEventKind lines after the head sealed into the
	// document (the evidence renewals since the seal).
	Renewals int
}

// RenewalEventKind is the evidence bundle event of an evidence renewal (package renewal): the
// only lines a bundle may hold after the head hash the seal put in the document.
const RenewalEventKind = "evidence.renewed"

// renewedAfter reports whether bundle (whose chain verified) holds a line with hash head
// followed only by renewal events, and how many.
func renewedAfter(bundle []byte, head string) (int, bool) {
	lines := bytes.Split(bytes.TrimRight(bundle, "\n"), []byte("\n"))
	for i, l := range lines {
		e, err := evidence.ParseLine(l)
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(e.Hash), []byte(head)) != 1 {
			continue
		}
		for _, rest := range lines[i+1:] {
			r, err := evidence.ParseLine(rest)
			if err != nil || r.Kind != RenewalEventKind {
				return 0, false
			}
		}
		return len(lines) - i - 1, true
	}
	return 0, false
}

// Checked is one verified signature or document timestamp.
type Checked struct {
	Field     string
	Kind      string // "signature" or "document timestamp"
	Signer    *x509.Certificate
	Time      *time.Time // the signature timestamp's (or the document timestamp's) genTime
	WholeFile bool       // its /ByteRange ends at the end of the file
	// Chain is the signer's chain as found in the CMS and the DSS (offline), with the
	// revocation answer the DSS holds for each certificate.
	Chain []CertStatus
	// TimestampChain is the chain of a signature's timestamp.
	TimestampChain []CertStatus
	// Trusted and TimestampTrusted: the chain holds one of Options.Trust (false without it).
	Trusted, TimestampTrusted bool
}

// CertStatus is one certificate of a chain.
type CertStatus struct {
	Cert *x509.Certificate
	// Revocation: "root" for the self-signed end, "OCSP good" or "CRL" when the DSS holds a
	// verified answer saying the certificate is not revoked, "" when it holds none.
	Revocation string
}

// Options of Verify. Trust empty means the signer certificate is reported, not trusted.
type Options struct {
	Trust  []*x509.Certificate
	Bundle io.Reader // nil: the bundle is not checked
	Now    time.Time // zero: time.Now (the archive timestamp's expiry warning)
}

// Verify checks pdf (and the bundle, when given), offline: it never opens a connection.
// Errors wrap ErrInvalid, or *evidence.LineError for a bad bundle line.
func Verify(pdf []byte, o Options) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fail("malformed PDF (%v)", r)
		}
	}()
	return verifyPDF(pdf, o)
}

func verifyPDF(pdf []byte, o Options) (*Result, error) {
	doc, err := ltv.Read(pdf)
	if err != nil {
		return nil, fail("%v", err)
	}
	ctx := doc.Ctx
	cat, err := ctx.Catalog()
	if err != nil {
		return nil, fail("no catalog: %v", err)
	}
	res := &Result{}
	if len(doc.Signatures) == 0 {
		return nil, fail("the document is not sealed: it carries no signature")
	}
	sig, err := seal(ctx, cat, doc.Signatures)
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
	sealIdx := -1
	for i, s := range doc.Signatures {
		if sameRange(s.Dict, sig) {
			sealIdx = i
		}
	}
	if sealIdx < 0 {
		return nil, fail("the seal is not in the document's signature fields")
	}
	last := doc.Signatures[len(doc.Signatures)-1]
	if end := last.ByteRange[2] + last.ByteRange[3]; end != len(pdf) {
		// B-LT: the DSS revision after the last signature is signed by nobody, and may hold
		// nothing but validation data
		if err := dssOnly(pdf, end, doc); err != nil {
			return nil, fail("%d bytes after the last signature or timestamp (%q): %v", len(pdf)-end, last.Field, err)
		}
	}
	pool := append([]*x509.Certificate{}, doc.DSS.Certs...)
	for _, s := range doc.Signatures {
		c, err := checkSignature(pdf, s)
		if err != nil {
			return nil, err
		}
		c.WholeFile = s.ByteRange[2]+s.ByteRange[3] == len(pdf)
		// each certificate of the chain was valid, and not revoked, when the signature or
		// timestamp was made (its own timestamp's time; the clock's for an untimestamped one)
		at := now(o)
		if c.Time != nil {
			at = *c.Time
		}
		c.Chain = chainStatus(doc, c.Signer, pool, c.Time)
		for _, cs := range c.Chain {
			if at.Before(cs.Cert.NotBefore) || at.After(cs.Cert.NotAfter) {
				return nil, fail("%s %q: certificate %q was not valid at %s", c.Kind, s.Field, cs.Cert.Subject.CommonName, at.UTC().Format(time.RFC3339))
			}
		}
		res.Signatures = append(res.Signatures, *c)
	}
	seal := &res.Signatures[sealIdx]
	sealSigned, _ := cms.Inspect(doc.Signatures[sealIdx].Contents)
	res.Signer = seal.Signer
	at := time.Now()
	if seal.Time != nil {
		res.TimestampTime, at = seal.Time, *seal.Time
		if tok, err := cms.Inspect(sealSigned.TimeStampToken); err == nil && tok.Signer != nil {
			seal.TimestampChain = chainStatus(doc, tok.Signer, pool, seal.Time)
		}
	}
	if end := doc.Signatures[sealIdx].ByteRange[2] + doc.Signatures[sealIdx].ByteRange[3]; end != len(pdf) {
		if !bytes.HasSuffix(bytes.TrimRight(pdf[:end], "\r\n"), []byte("%%EOF")) {
			return nil, fail("the seal's /ByteRange does not end at a revision")
		}
		if res.DocMDP == 1 {
			res.Warnings = append(res.Warnings, "the certification allows no change (DocMDP P 1) and later revisions add "+
				"validation data or timestamps: readers that apply P 1 to every byte (Acrobat) report the certification as broken")
		}
	}
	if len(o.Trust) > 0 {
		roots, inter := x509.NewCertPool(), x509.NewCertPool()
		for _, c := range o.Trust {
			roots.AddCert(c)
		}
		for _, c := range append(sealSigned.Certificates, pool...) {
			inter.AddCert(c)
		}
		if _, err := res.Signer.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			return nil, fail("signer certificate %q is not trusted: %v", res.Signer.Subject.String(), err)
		}
		res.Trusted = true
	}
	for i := range res.Signatures {
		c := &res.Signatures[i]
		c.Trusted, c.TimestampTrusted = anchored(c.Chain, o.Trust), anchored(c.TimestampChain, o.Trust)
	}
	res.Level = level(doc, res, sealIdx)
	if last.IsDocTimestamp() && sealIdx < len(doc.Signatures)-1 {
		na := res.Signatures[len(res.Signatures)-1].Signer.NotAfter
		res.ArchiveExpires = &na
		if now(o).After(na) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("the archive timestamp's certificate expired on %s: the evidence was not renewed in time", na.UTC().Format(time.RFC3339)))
		}
	}
	if ctx.Info != nil {
		if info, err := ctx.DereferenceDict(*ctx.Info); err == nil && info != nil {
			if v, err := ctx.DereferenceStringOrHexLiteral(info[certificate.InfoKeyEvidenceHead], model.V10, nil); err == nil {
				res.EvidenceHead = v
			}
		}
	}
	if o.Bundle != nil {
		b, err := io.ReadAll(o.Bundle)
		if err != nil {
			return nil, err
		}
		head, n, err := evidence.Verify(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		res.BundleHead, res.BundleLines = head, n
		if res.EvidenceHead == "" {
			return nil, fail("the document holds no evidence head hash (/Info /%s)", certificate.InfoKeyEvidenceHead)
		}
		if subtle.ConstantTimeCompare([]byte(head), []byte(res.EvidenceHead)) != 1 {
			renewals, ok := renewedAfter(b, res.EvidenceHead)
			if !ok {
				return nil, fail("evidence head hash in the document (%s) differs from the bundle's head (%s)", res.EvidenceHead, head)
			}
			res.Renewals = renewals
		}
	}
	return res, nil
}

// checkSignature verifies one signature (CMS over its byte ranges, ESS signing-certificate-v2,
// its signature timestamp) or document timestamp (RFC 3161 token over its byte ranges, signed
// by a time-stamping certificate).
func checkSignature(pdf []byte, s ltv.Signature) (*Checked, error) {
	signed, err := s.SignedBytes(pdf)
	if err != nil {
		return nil, fail("%v", err)
	}
	c := &Checked{Field: s.Field, Kind: "signature"}
	switch {
	case s.IsDocTimestamp():
		c.Kind = "document timestamp"
		if s.Type != "DocTimeStamp" {
			return nil, fail("document timestamp %q: /Type is %q, want DocTimeStamp", s.Field, s.Type)
		}
		info, tok, err := cms.VerifyTimestamp(s.Contents, signed)
		if err != nil {
			return nil, fail("document timestamp %q: %v", s.Field, err)
		}
		if !hasTimeStamping(tok.Signer) {
			return nil, fail("document timestamp %q: its certificate is not for time-stamping", s.Field)
		}
		t := info.GenTime
		c.Signer, c.Time = tok.Signer, &t
	case s.SubFilter == "ETSI.CAdES.detached" || s.SubFilter == "adbe.pkcs7.detached":
		sd, err := cms.Verify(s.Contents, signed)
		if err != nil {
			return nil, fail("signature %q: %v", s.Field, err)
		}
		if s.SubFilter == "ETSI.CAdES.detached" && !sd.HasSigningCertV2 {
			return nil, fail("signature %q: no ESS signing-certificate-v2 attribute (required by PAdES)", s.Field)
		}
		c.Signer = sd.Signer
		if sd.TimeStampToken != nil {
			info, _, err := cms.VerifyTimestamp(sd.TimeStampToken, sd.Signature)
			if err != nil {
				return nil, fail("timestamp of %q: %v", s.Field, err)
			}
			t := info.GenTime
			c.Time = &t
		}
	default:
		return nil, fail("signature %q: SubFilter %q is not supported", s.Field, s.SubFilter)
	}
	return c, nil
}

func now(o Options) time.Time {
	if o.Now.IsZero() {
		return time.Now()
	}
	return o.Now
}

// anchored reports whether chain holds one of the trust anchors.
func anchored(chain []CertStatus, trust []*x509.Certificate) bool {
	for _, c := range chain {
		for _, t := range trust {
			if c.Cert.Equal(t) {
				return true
			}
		}
	}
	return false
}

func hasTimeStamping(c *x509.Certificate) bool {
	for _, u := range c.ExtKeyUsage {
		if u == x509.ExtKeyUsageTimeStamping {
			return true
		}
	}
	return false
}

// chainStatus builds leaf's chain from the CMS certificates and the DSS only (no network) and
// finds, for each certificate but the root, a verified revocation answer in the DSS.
func chainStatus(doc *ltv.Document, leaf *x509.Certificate, pool []*x509.Certificate, usedAt *time.Time) []CertStatus {
	known := append([]*x509.Certificate{}, pool...)
	for _, s := range doc.Signatures {
		if sd, err := cms.Inspect(s.Contents); err == nil {
			known = append(known, sd.Certificates...)
			if sd.TimeStampToken != nil {
				if tok, err := cms.Inspect(sd.TimeStampToken); err == nil {
					known = append(known, tok.Certificates...)
				}
			}
		}
	}
	chain, err := ltv.Collector{Offline: true}.Chain(context.Background(), leaf, known)
	if err != nil {
		// the issuer is not in the document: the chain ends here, with no root
		return []CertStatus{{Cert: leaf}}
	}
	out := make([]CertStatus, len(chain))
	for i, c := range chain {
		out[i].Cert = c
		if i == len(chain)-1 {
			out[i].Revocation = "root"
			continue
		}
		out[i].Revocation = revocationIn(doc.DSS, c, chain[i+1], usedAt)
	}
	return out
}

// revocationIn is "OCSP good" or "CRL" when the DSS holds an answer for c, signed for its
// issuer, saying it is not revoked, or, for a certificate used at a timestamped time, that it
// was revoked only after (then "... revoked later, <time>"); "" otherwise.
func revocationIn(dss ltv.DSS, c, issuer *x509.Certificate, usedAt *time.Time) string {
	var at time.Time
	if usedAt != nil {
		at = *usedAt
	}
	for _, der := range dss.OCSPs {
		r, err := ocsp.ParseResponseForCert(der, c, issuer)
		switch {
		case err != nil:
		case r.Status == ocsp.Good:
			return "OCSP good"
		case r.Status == ocsp.Revoked && !at.IsZero() && r.RevokedAt.After(at):
			return "OCSP revoked later, " + r.RevokedAt.UTC().Format(time.RFC3339)
		}
	}
	for _, der := range dss.CRLs {
		rl, err := x509.ParseRevocationList(der)
		if err != nil {
			continue
		}
		if err := ltv.CheckCRL(der, c, issuer, rl.ThisUpdate, at); err == nil {
			return "CRL"
		}
	}
	return ""
}

// complete reports a chain that reaches a root with a revocation answer for every other
// certificate.
func complete(chain []CertStatus) bool {
	if len(chain) == 0 || chain[len(chain)-1].Revocation != "root" {
		return false
	}
	for _, c := range chain {
		if c.Revocation == "" {
			return false
		}
	}
	return true
}

func level(doc *ltv.Document, res *Result, sealIdx int) ltv.Level {
	seal := res.Signatures[sealIdx]
	var dts []Checked // document timestamps after the seal
	for _, c := range res.Signatures[sealIdx+1:] {
		if c.Kind == "document timestamp" {
			dts = append(dts, c)
		}
	}
	if seal.Time == nil && len(dts) == 0 {
		return ltv.LevelB
	}
	tsChain := seal.TimestampChain
	if seal.Time == nil {
		tsChain = dts[0].Chain // a document timestamp stands in for the signature timestamp
	}
	if !doc.DSS.Present || !complete(seal.Chain) || !complete(tsChain) {
		return ltv.LevelT
	}
	// B-LTA: an archive timestamp over the DSS ends the file (Verify checked that the last
	// signature covers it); the one standing in for the signature timestamp does not count
	archives := len(dts)
	if seal.Time == nil {
		archives--
	}
	if archives > 0 && res.Signatures[len(res.Signatures)-1].Kind == "document timestamp" {
		return ltv.LevelLTA
	}
	return ltv.LevelLT
}

var objHeader = regexp.MustCompile(`(?m)^(\d+) (\d+) obj\b`)

// dssOnly checks that pdf[end:] is incremental updates that add validation data and nothing
// else: the same catalog but its /DSS, the DSS dictionary, the streams its arrays name, and
// cross-reference streams.
func dssOnly(pdf []byte, end int, doc *ltv.Document) error {
	if !bytes.HasSuffix(bytes.TrimRight(pdf[:end], "\r\n"), []byte("%%EOF")) {
		return errors.New("the signed range does not end at a revision")
	}
	prev, err := ltv.Read(pdf[:end])
	if err != nil {
		return fmt.Errorf("the signed revision cannot be read: %v", err)
	}
	before, err := prev.Ctx.Catalog()
	if err != nil {
		return err
	}
	now, err := doc.Ctx.Catalog()
	if err != nil {
		return err
	}
	strip := func(d types.Dict) string {
		c := d.Clone().(types.Dict)
		delete(c, "DSS")
		return c.PDFString()
	}
	if strip(before) != strip(now) {
		return errors.New("they change the catalog beyond its /DSS")
	}
	allowed := map[int]bool{}
	if r := doc.Ctx.Root; r != nil {
		allowed[r.ObjectNumber.Value()] = true
	}
	if r, ok := now["DSS"].(types.IndirectRef); ok {
		allowed[r.ObjectNumber.Value()] = true
	}
	if dss, err := doc.Ctx.DereferenceDict(now["DSS"]); err == nil && dss != nil {
		for _, k := range []string{"Certs", "OCSPs", "CRLs"} {
			arr, _ := doc.Ctx.DereferenceArray(dss[k])
			for _, o := range arr {
				if r, ok := o.(types.IndirectRef); ok {
					allowed[r.ObjectNumber.Value()] = true
				}
			}
		}
	}
	tail := pdf[end:]
	if !bytes.HasSuffix(bytes.TrimRight(tail, "\r\n"), []byte("%%EOF")) {
		return errors.New("they do not end in a revision (%%EOF)")
	}
	headers := objHeader.FindAllSubmatchIndex(tail, -1)
	if len(headers) == 0 {
		return errors.New("they hold no objects")
	}
	for _, m := range headers {
		nr, _ := strconv.Atoi(string(tail[m[2]:m[3]]))
		if allowed[nr] {
			continue
		}
		body := tail[m[1]:]
		if e := bytes.Index(body, []byte("endobj")); e >= 0 {
			body = body[:e]
		}
		// a cross-reference stream: a new object number (not a new version of the
		// document's objects) whose dictionary says /Type /XRef
		if s := bytes.Index(body, []byte("stream")); s >= 0 && xrefType.Match(body[:s]) &&
			prev.Ctx.XRefTable.Size != nil && nr >= *prev.Ctx.XRefTable.Size {
			continue
		}
		return fmt.Errorf("they change object %d, which is not validation data", nr)
	}
	return nil
}

var xrefType = regexp.MustCompile(`/Type\s*/XRef\b`)

func sameRange(a, b types.Dict) bool {
	x, y := a["ByteRange"], b["ByteRange"]
	return x != nil && y != nil && x.String() == y.String()
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

// seal is the signature to verify: the DocMDP certification of a certified document; else (a
// sealed workflow record that was signed next carries approval signatures only) the last
// CAdES signature, the last revision's before any validation data and archive timestamps.
func seal(ctx *model.Context, cat types.Dict, sigs []ltv.Signature) (types.Dict, error) {
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
	for i := len(sigs) - 1; i >= 0; i-- {
		if !sigs[i].IsDocTimestamp() {
			return sigs[i].Dict, nil
		}
	}
	return nil, fail("the document is not sealed: no certification and no signature")
}
