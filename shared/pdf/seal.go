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

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/pdf/certificate"
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
}

// SealOutput holds the results.
type SealOutput struct {
	SignedPDF      []byte
	CertificatePDF []byte // the evidence certificate as its own (unsigned) PDF
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
	signed, err := pades.SignDoc(ctx, d, pades.Options{
		Signer: in.Signer, Chain: in.Chain, TSAURL: in.TSAURL,
		Name: in.SealName, Reason: in.SealReason, Info: &info,
	})
	if err != nil {
		return SealOutput{}, err
	}
	cert, err := certificate.Standalone(in.Certificate, size)
	if err != nil {
		return SealOutput{}, err
	}
	return SealOutput{SignedPDF: signed, CertificatePDF: cert}, nil
}
