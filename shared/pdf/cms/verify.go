package cms

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"time"
)

// Signed is a parsed and verified SignedData.
type Signed struct {
	Signer       *x509.Certificate
	Certificates []*x509.Certificate
	ContentType  asn1.ObjectIdentifier
	Content      []byte // encapsulated content, nil when detached
	Signature    []byte
	// TimeStampToken is the DER of the signature-time-stamp-token attribute, if any.
	TimeStampToken []byte
	// HasSigningCertV2 reports an ESS signing-certificate-v2 attribute matching Signer.
	HasSigningCertV2 bool
	HasSigningTime   bool
}

// ErrVerify wraps every verification failure.
var ErrVerify = errors.New("cms: verification failed")

func fail(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrVerify, fmt.Sprintf(format, a...))
}

// Verify parses a DER ContentInfo with SignedData and checks its single SignerInfo: SHA-256
// digest, message-digest over detached (or, when detached is nil, the encapsulated) content,
// signature over the signed attributes, and signing-certificate-v2 when present. It does not
// check certificate trust; see Signed.Signer. Errors wrap ErrVerify.
func Verify(der, detached []byte) (*Signed, error) {
	sd, certs, err := parse(der)
	if err != nil {
		return nil, err
	}
	out := &Signed{Certificates: certs, ContentType: sd.EncapContentInfo.EContentType}
	content := detached
	if len(sd.EncapContentInfo.EContent.Bytes) > 0 {
		if _, err := asn1.Unmarshal(sd.EncapContentInfo.EContent.Bytes, &out.Content); err != nil {
			return nil, fail("eContent: %v", err)
		}
		if detached != nil {
			return nil, fail("content both encapsulated and detached")
		}
		content = out.Content
	}
	si := sd.SignerInfos[0]
	if !si.DigestAlgorithm.Algorithm.Equal(OIDSHA256) {
		return nil, fail("digest algorithm %v not allowed (SHA-256 only)", si.DigestAlgorithm.Algorithm)
	}
	for _, c := range certs {
		if bytes.Equal(c.RawIssuer, si.SID.Issuer.FullBytes) && c.SerialNumber.Cmp(si.SID.Serial) == 0 {
			out.Signer = c
			break
		}
	}
	if out.Signer == nil {
		return nil, fail("signer certificate not in the CMS")
	}
	if len(si.SignedAttrs.FullBytes) == 0 {
		return nil, fail("signed attributes missing")
	}
	signedAttrs := append([]byte{0x31}, si.SignedAttrs.FullBytes[1:]...)
	var attrs []attribute
	if _, err := asn1.UnmarshalWithParams(signedAttrs, &attrs, "set"); err != nil {
		return nil, fail("signed attributes: %v", err)
	}
	var digestOK, typeOK bool
	want := sha256.Sum256(content)
	for _, a := range attrs {
		switch {
		case a.Type.Equal(OIDAttrMessageDigest):
			var md []byte
			if _, err := asn1.Unmarshal(a.Values.Bytes, &md); err != nil {
				return nil, fail("message-digest: %v", err)
			}
			digestOK = subtle.ConstantTimeCompare(md, want[:]) == 1
		case a.Type.Equal(OIDAttrContentType):
			var ct asn1.ObjectIdentifier
			if _, err := asn1.Unmarshal(a.Values.Bytes, &ct); err != nil {
				return nil, fail("content-type: %v", err)
			}
			typeOK = ct.Equal(out.ContentType)
		case a.Type.Equal(OIDAttrSigningTime):
			out.HasSigningTime = true
		case a.Type.Equal(OIDAttrSigningCertV2):
			var sc signingCertificateV2
			if _, err := asn1.Unmarshal(a.Values.Bytes, &sc); err != nil || len(sc.Certs) == 0 {
				return nil, fail("signing-certificate-v2 malformed")
			}
			h := sha256.Sum256(out.Signer.Raw)
			if subtle.ConstantTimeCompare(sc.Certs[0].CertHash, h[:]) != 1 {
				return nil, fail("signing-certificate-v2 does not match the signer certificate")
			}
			out.HasSigningCertV2 = true
		}
	}
	if !digestOK {
		return nil, fail("message digest does not match the signed content")
	}
	if !typeOK {
		return nil, fail("content-type attribute missing or wrong")
	}
	if _, err := signatureAlgorithm(out.Signer.PublicKey); err != nil {
		return nil, fail("%v", err)
	}
	if alg := si.SignatureAlgorithm.Algorithm; !(alg.Equal(OIDRSAEncryption) || alg.Equal(OIDSHA256WithRSA) || alg.Equal(OIDECDSAWithSHA256)) {
		return nil, fail("signature algorithm %v not allowed", alg)
	}
	attrsDigest := sha256.Sum256(signedAttrs)
	if err := verifySignature(out.Signer.PublicKey, attrsDigest[:], si.Signature); err != nil {
		return nil, fail("signature does not verify: %v", err)
	}
	out.Signature = si.Signature
	if len(si.UnsignedAttrs.FullBytes) > 0 {
		unsigned := append([]byte{0x31}, si.UnsignedAttrs.FullBytes[1:]...)
		var ua []attribute
		if _, err := asn1.UnmarshalWithParams(unsigned, &ua, "set"); err != nil {
			return nil, fail("unsigned attributes: %v", err)
		}
		for _, a := range ua {
			if a.Type.Equal(OIDAttrTimeStampToken) {
				var tok asn1.RawValue
				if _, err := asn1.Unmarshal(a.Values.Bytes, &tok); err != nil {
					return nil, fail("timestamp token: %v", err)
				}
				out.TimeStampToken = tok.FullBytes
			}
		}
	}
	return out, nil
}

// parse reads a ContentInfo holding a SignedData with exactly one SignerInfo (zero padding
// after it allowed, as /Contents has) and its certificates. Errors wrap ErrVerify.
func parse(der []byte) (*signedData, []*x509.Certificate, error) {
	var ci contentInfo
	if rest, err := asn1.Unmarshal(der, &ci); err != nil {
		return nil, nil, fail("not a CMS ContentInfo: %v", err)
	} else if len(bytes.TrimRight(rest, "\x00")) != 0 {
		return nil, nil, fail("trailing data after CMS")
	}
	if !ci.ContentType.Equal(OIDSignedData) {
		return nil, nil, fail("content type is not signedData")
	}
	var sd signedData
	if _, err := asn1.Unmarshal(ci.Content.Bytes, &sd); err != nil {
		return nil, nil, fail("malformed SignedData: %v", err)
	}
	if len(sd.SignerInfos) != 1 {
		return nil, nil, fail("want exactly one SignerInfo, got %d", len(sd.SignerInfos))
	}
	certs, err := x509.ParseCertificates(sd.Certificates.Bytes)
	if err != nil {
		return nil, nil, fail("certificates: %v", err)
	}
	return &sd, certs, nil
}

// Inspect reads a SignedData without verifying it: the signer certificate (nil when it is not
// in the CMS), every certificate, and the signature-time-stamp-token when present. It serves
// collecting validation data for signatures already in a document (package ltv); Verify is
// the check. Errors wrap ErrVerify for DER that is not a SignedData with one SignerInfo.
func Inspect(der []byte) (*Signed, error) {
	sd, certs, err := parse(der)
	if err != nil {
		return nil, err
	}
	si := sd.SignerInfos[0]
	out := &Signed{Certificates: certs, ContentType: sd.EncapContentInfo.EContentType, Signature: si.Signature}
	if len(sd.EncapContentInfo.EContent.Bytes) > 0 {
		if _, err := asn1.Unmarshal(sd.EncapContentInfo.EContent.Bytes, &out.Content); err != nil {
			return nil, fail("eContent: %v", err)
		}
	}
	for _, c := range certs {
		if bytes.Equal(c.RawIssuer, si.SID.Issuer.FullBytes) && c.SerialNumber.Cmp(si.SID.Serial) == 0 {
			out.Signer = c
		}
	}
	if len(si.UnsignedAttrs.FullBytes) > 0 {
		var ua []attribute
		if _, err := asn1.UnmarshalWithParams(append([]byte{0x31}, si.UnsignedAttrs.FullBytes[1:]...), &ua, "set"); err == nil {
			for _, a := range ua {
				var tok asn1.RawValue
				if a.Type.Equal(OIDAttrTimeStampToken) {
					if _, err := asn1.Unmarshal(a.Values.Bytes, &tok); err == nil {
						out.TimeStampToken = tok.FullBytes
					}
				}
			}
		}
	}
	return out, nil
}

// TimestampTime is a TimeStampToken's genTime, read without verifying the token (Inspect).
// Errors wrap ErrVerify for a token without a TSTInfo.
func TimestampTime(token []byte) (time.Time, error) {
	s, err := Inspect(token)
	if err != nil {
		return time.Time{}, err
	}
	var info TSTInfo
	if !s.ContentType.Equal(OIDTSTInfo) {
		return time.Time{}, fail("timestamp token does not hold a TSTInfo")
	}
	if _, err := asn1.Unmarshal(s.Content, &info); err != nil {
		return time.Time{}, fail("TSTInfo: %v", err)
	}
	return info.GenTime, nil
}
