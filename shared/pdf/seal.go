// Package pdf seals a signing session's document in one call: stamp the signers' values
// (package stamp), append a signature page when the document has no field manifest, append
// the evidence certificate pages (package certificate), and sign the result with a PAdES
// baseline signature (package pades), all as one incremental update of the source bytes.
package pdf

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/cms"
	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/pdf/pades"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pdf/stamp"
)

// MaxSourceBytes bounds the source PDF the seal jobs read.
const MaxSourceBytes = 256 << 20

// SealInput is everything a seal needs.
type SealInput struct {
	Source     []byte
	Placements []stamp.Placement
	// SignaturePage, when non-empty, appends a signature page with these boxes (the caller
	// sets it when the document has no field manifest; see stamp.Manifest).
	SignaturePage []stamp.SignatureBox
	Certificate   certificate.Certificate
	Signer        crypto.Signer
	Chain         []*x509.Certificate // signer certificate first
	TSAURL        string              // optional RFC 3161 authority
	SealName      string              // optional /Name of the signature
	SealReason    string              // optional /Reason of the signature
	// Level is the PAdES level to reach; zero means B-LTA with a TSA, B-B without. B-T and
	// above need TSAURL; B-LT and above fetch revocation data for every certificate of the
	// seal's and the TSA's chains (DESIGN 15) and fail when one cannot be had.
	Level ltv.Level
	// HTTP is the client for the TSA, OCSP responders, CRLs and caIssuers (nil: 15 s timeout).
	HTTP *http.Client
}

// ResolveLevel is the level a seal with this TSA reaches: l, or its default. Errors: a level
// that needs a timestamp without a TSA.
func ResolveLevel(l ltv.Level, tsaURL string) (ltv.Level, error) {
	if l == ltv.LevelNone {
		if tsaURL != "" {
			return ltv.LevelLTA, nil
		}
		return ltv.LevelB, nil
	}
	if l > ltv.LevelB && tsaURL == "" {
		return l, fmt.Errorf("pdf: seal level %s needs a timestamp authority", l)
	}
	return l, nil
}

// SealOutput holds the results.
type SealOutput struct {
	SignedPDF      []byte
	CertificatePDF []byte // the evidence certificate as its own (unsigned) PDF
	Level          ltv.Level
}

// Seal stamps, appends the signature page and certificate, and signs. Errors: apperr invalid
// ("pdf_unreadable", "pdf_encrypted", "placement_invalid", "image_invalid")
// for input that can never be sealed; otherwise signer, timestamp or context errors, which are
// worth a retry.
func Seal(ctx context.Context, in SealInput) (SealOutput, error) {
	src := in.Source
	if len(src) == 0 || !bytes.HasPrefix(bytes.TrimLeft(src[:min(len(src), 1024)], "\x00\r\n\t "), []byte("%PDF-")) {
		return SealOutput{}, apperr.Invalid(pdfdoc.CodeUnreadable, apperr.Field("source", "not a PDF"))
	}
	if in.Signer == nil || len(in.Chain) == 0 {
		return SealOutput{}, errors.New("pdf: seal signer and certificate chain are required")
	}
	level, err := ResolveLevel(in.Level, in.TSAURL)
	if err != nil {
		return SealOutput{}, err
	}
	in.Certificate.SealLevel = level.String()
	d, err := pdfdoc.Open(src)
	if err != nil {
		return SealOutput{}, err
	}
	font, err := pdfdoc.NewFont(d)
	if err != nil {
		return SealOutput{}, err
	}
	if err := stamp.Apply(d, font, in.Placements); err != nil {
		return SealOutput{}, err
	}
	if len(in.SignaturePage) > 0 {
		if err := stamp.AppendSignaturePages(d, font, in.SignaturePage); err != nil {
			return SealOutput{}, err
		}
	}
	size := certificate.PageSizeOf(d)
	info, err := certificate.Append(d, font, in.Certificate)
	if err != nil {
		return SealOutput{}, err
	}
	var tsa *cms.TSAClient
	if level >= ltv.LevelT {
		tsa = &cms.TSAClient{URL: in.TSAURL, HTTP: in.HTTP}
	}
	mdp := 1
	if level >= ltv.LevelLT {
		mdp = 2 // the DSS and archive timestamp revisions come after the certification
	}
	signed, err := pades.SignDoc(ctx, d, pades.Options{
		Signer: in.Signer, Chain: in.Chain, TSA: tsa,
		Name: in.SealName, Reason: in.SealReason, Info: &info, DocMDP: mdp,
	})
	if err != nil {
		return SealOutput{}, err
	}
	if signed, err = Extend(ctx, signed, level, in.TSAURL, in.HTTP); err != nil {
		return SealOutput{}, err
	}
	cert, err := certificate.Standalone(in.Certificate, size)
	if err != nil {
		return SealOutput{}, err
	}
	return SealOutput{SignedPDF: signed, CertificatePDF: cert, Level: level}, nil
}

// Extend lifts a signed (B-B or B-T) PDF to level: for B-LT a DSS with the validation data of
// every signature and timestamp in it, for B-LTA an archive document timestamp after it; below
// B-LT it returns pdf as is. Errors: those of extendLTV (ltv.ErrRevocation when a revocation
// answer cannot be had: the seal fails rather than ship a weaker level).
func Extend(ctx context.Context, pdf []byte, level ltv.Level, tsaURL string, client *http.Client) ([]byte, error) {
	if level < ltv.LevelLT {
		return pdf, nil
	}
	o := extendOptions{Collector: ltv.Collector{HTTP: client}}
	if level >= ltv.LevelLTA {
		o.TSA = &cms.TSAClient{URL: tsaURL, HTTP: client}
	}
	return extendLTV(ctx, pdf, o)
}
