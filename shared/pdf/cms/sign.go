package cms

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
)

// ErrUnsupportedKey is returned for keys other than RSA (2048 bits or more) and ECDSA P-256.
var ErrUnsupportedKey = errors.New("cms: unsupported key: want RSA >= 2048 bits or ECDSA P-256")

// SignOptions describes one signature.
type SignOptions struct {
	Signer crypto.Signer
	Chain  []*x509.Certificate // signer certificate first, then intermediates
	// Content is signed detached (eContent absent) unless Encapsulate is set.
	Content []byte
	// ContentDigest, when set (32 bytes), is the SHA-256 of a detached content that is not
	// passed in Content (avoids copying a large document).
	ContentDigest []byte
	Encapsulate   bool
	// ContentType defaults to id-data.
	ContentType asn1.ObjectIdentifier
	// Timestamp, when set, is called with the signature value and returns a DER
	// TimeStampToken to add as the unsigned attribute signature-time-stamp-token.
	Timestamp func(ctx context.Context, signature []byte) ([]byte, error)
}

// signatureAlgorithm checks the key against the allow-list and returns the CMS algorithm.
func signatureAlgorithm(pub crypto.PublicKey) (pkix.AlgorithmIdentifier, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return pkix.AlgorithmIdentifier{}, ErrUnsupportedKey
		}
		return pkix.AlgorithmIdentifier{Algorithm: OIDRSAEncryption, Parameters: asn1Null}, nil
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return pkix.AlgorithmIdentifier{}, ErrUnsupportedKey
		}
		return pkix.AlgorithmIdentifier{Algorithm: OIDECDSAWithSHA256}, nil
	}
	return pkix.AlgorithmIdentifier{}, ErrUnsupportedKey
}

// Sign returns a DER ContentInfo holding SignedData over o.Content. Errors: ErrUnsupportedKey;
// a mismatch between key and certificate; the signer's or timestamp's own errors.
func Sign(ctx context.Context, o SignOptions) ([]byte, error) {
	if o.Signer == nil || len(o.Chain) == 0 {
		return nil, errors.New("cms: signer and certificate are required")
	}
	cert := o.Chain[0]
	sigAlg, err := signatureAlgorithm(o.Signer.Public())
	if err != nil {
		return nil, err
	}
	if !publicKeysEqual(o.Signer.Public(), cert.PublicKey) {
		return nil, errors.New("cms: the key does not belong to the signer certificate")
	}
	ct := o.ContentType
	if ct == nil {
		ct = OIDData
	}
	digest := sha256.Sum256(o.Content)
	if o.ContentDigest != nil {
		if len(o.ContentDigest) != sha256.Size || o.Encapsulate {
			return nil, errors.New("cms: ContentDigest must be 32 bytes and detached")
		}
		copy(digest[:], o.ContentDigest)
	}
	certHash := sha256.Sum256(cert.Raw)
	gn, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 4, IsCompound: true, Bytes: cert.RawIssuer})
	if err != nil {
		return nil, err
	}
	scv2, err := asn1.Marshal(signingCertificateV2{Certs: []essCertIDv2{{
		CertHash:     certHash[:],
		IssuerSerial: issuerSerial{Issuer: asn1.RawValue{Tag: asn1.TagSequence, IsCompound: true, Bytes: gn}, Serial: cert.SerialNumber},
	}}})
	if err != nil {
		return nil, err
	}
	attrs, err := attributeSet(
		attrValue(OIDAttrContentType, ct),
		attrValue(OIDAttrMessageDigest, digest[:]),
		attrRaw(OIDAttrSigningCertV2, scv2),
	)
	if err != nil {
		return nil, err
	}
	attrsDigest := sha256.Sum256(attrs)
	sig, err := o.Signer.Sign(rand.Reader, attrsDigest[:], crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("cms: sign: %w", err)
	}
	if err := verifySignature(cert.PublicKey, attrsDigest[:], sig); err != nil {
		return nil, fmt.Errorf("cms: the signer produced a signature that does not verify (for ECDSA from a key vault wrap it in RawECDSASigner): %w", err)
	}
	si := signerInfo{
		Version:            1,
		SID:                issuerAndSerial{Issuer: asn1.RawValue{FullBytes: cert.RawIssuer}, Serial: cert.SerialNumber},
		DigestAlgorithm:    sha256AlgorithmIdentifer,
		SignedAttrs:        asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: attrs[headerLen(attrs):]},
		SignatureAlgorithm: sigAlg,
		Signature:          sig,
	}
	if o.Timestamp != nil {
		tok, err := o.Timestamp(ctx, sig)
		if err != nil {
			return nil, err
		}
		unsigned, err := attributeSet(attrRaw(OIDAttrTimeStampToken, tok))
		if err != nil {
			return nil, err
		}
		si.UnsignedAttrs = asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 1, IsCompound: true, Bytes: unsigned[headerLen(unsigned):]}
	}
	var certs []byte
	for _, c := range o.Chain {
		certs = append(certs, c.Raw...)
	}
	eci := encapContentInfo{EContentType: ct}
	if o.Encapsulate {
		oct, err := asn1.Marshal(o.Content)
		if err != nil {
			return nil, err
		}
		eci.EContent = asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: oct}
	}
	version := 1
	if !ct.Equal(OIDData) {
		version = 3
	}
	sd := signedData{
		Version:          version,
		DigestAlgorithms: []pkix.AlgorithmIdentifier{sha256AlgorithmIdentifer},
		EncapContentInfo: eci,
		Certificates:     asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: certs},
		SignerInfos:      []signerInfo{si},
	}
	inner, err := asn1.Marshal(sd)
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(contentInfo{ContentType: OIDSignedData, Content: asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: inner}})
}

type attr struct {
	oid asn1.ObjectIdentifier
	der []byte
	err error
}

func attrValue(oid asn1.ObjectIdentifier, v any) attr {
	der, err := asn1.Marshal(v)
	return attr{oid, der, err}
}

func attrRaw(oid asn1.ObjectIdentifier, der []byte) attr { return attr{oid, der, nil} }

// attributeSet returns the DER SET OF Attribute (tag 0x31), elements in DER order.
func attributeSet(as ...attr) ([]byte, error) {
	encoded := make([][]byte, 0, len(as))
	for _, a := range as {
		if a.err != nil {
			return nil, a.err
		}
		der, err := asn1.Marshal(attribute{Type: a.oid, Values: asn1.RawValue{Tag: asn1.TagSet, IsCompound: true, Bytes: a.der}})
		if err != nil {
			return nil, err
		}
		encoded = append(encoded, der)
	}
	sort.Slice(encoded, func(i, j int) bool { return bytes.Compare(encoded[i], encoded[j]) < 0 })
	return asn1.Marshal(asn1.RawValue{Tag: asn1.TagSet, IsCompound: true, Bytes: bytes.Join(encoded, nil)})
}

// headerLen is the length of the tag and length octets of a DER element.
func headerLen(der []byte) int {
	if len(der) < 2 || der[1] < 0x80 {
		return 2
	}
	return 2 + int(der[1]&0x7f)
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	e, ok := a.(equaler)
	return ok && e.Equal(b)
}

func verifySignature(pub crypto.PublicKey, digest, sig []byte) error {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, digest, sig)
	case *ecdsa.PublicKey:
		if !ecdsa.VerifyASN1(k, digest, sig) {
			return errors.New("ecdsa signature does not verify")
		}
		return nil
	}
	return ErrUnsupportedKey
}

// RawECDSASigner adapts a signer whose ECDSA signatures come as raw r||s (Azure Key Vault's
// ES256 sign operation) to crypto.Signer, which must return ASN.1 DER.
type RawECDSASigner struct {
	Key *ecdsa.PublicKey
	// SignRaw signs a SHA-256 digest and returns r||s, each 32 bytes for P-256.
	SignRaw func(digest []byte) ([]byte, error)
}

// Public returns the public key.
func (s RawECDSASigner) Public() crypto.PublicKey { return s.Key }

// Sign converts SignRaw's r||s to DER. Errors: SignRaw's error, or a malformed r||s.
func (s RawECDSASigner) Sign(_ io.Reader, digest []byte, _ crypto.SignerOpts) ([]byte, error) {
	raw, err := s.SignRaw(digest)
	if err != nil {
		return nil, err
	}
	size := (s.Key.Curve.Params().BitSize + 7) / 8
	if len(raw) != 2*size {
		return nil, fmt.Errorf("cms: raw ECDSA signature has %d bytes, want %d", len(raw), 2*size)
	}
	r, t := new(big.Int).SetBytes(raw[:size]), new(big.Int).SetBytes(raw[size:])
	return asn1.Marshal(struct{ R, S *big.Int }{r, t})
}
