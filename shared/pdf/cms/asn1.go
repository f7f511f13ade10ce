// Package cms writes and verifies the small part of CMS (RFC 5652) a PAdES baseline signature
// and an RFC 3161 timestamp token need: SignedData with one SignerInfo, SHA-256, RSA PKCS#1
// v1.5 or ECDSA P-256, signed attributes content-type, message-digest and ESS
// signing-certificate-v2 (RFC 5035), and the unsigned attribute signature-time-stamp-token.
//
// Why hand-written rather than github.com/smallstep/pkcs7 (v0.2.3, in go.mod): its AddSigner
// always adds a signing-time attribute set from the local clock (PAdES baseline, ETSI EN
// 319 142-1, says the claimed time belongs in the signature dictionary's /M and the CMS
// signing-time attribute shall not be present), and adding a timestamp token computed over the
// finished signature value needs the SignerInfo rebuilt after signing, which its API does not
// expose. The encoding here is small, uses only encoding/asn1 and is checked in tests by
// poppler's pdfsig, pdfcpu and this package's own verifier.
package cms

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"time"
)

// Object identifiers used by the package.
var (
	OIDData                  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	OIDSignedData            = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	OIDTSTInfo               = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 1, 4}
	OIDAttrContentType       = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	OIDAttrMessageDigest     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	OIDAttrSigningTime       = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 5}
	OIDAttrSigningCertV2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 2, 47}
	OIDAttrTimeStampToken    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 2, 14}
	OIDSHA256                = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
	OIDRSAEncryption         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 1}
	OIDSHA256WithRSA         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 11}
	OIDECDSAWithSHA256       = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
	OIDECPublicKey           = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	asn1Null                 = asn1.RawValue{Tag: asn1.TagNull}
	sha256AlgorithmIdentifer = pkix.AlgorithmIdentifier{Algorithm: OIDSHA256}
)

type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"explicit,tag:0"`
}

type signedData struct {
	Version          int
	DigestAlgorithms []pkix.AlgorithmIdentifier `asn1:"set"`
	EncapContentInfo encapContentInfo
	Certificates     asn1.RawValue `asn1:"optional,tag:0"`
	CRLs             asn1.RawValue `asn1:"optional,tag:1"`
	SignerInfos      []signerInfo  `asn1:"set"`
}

type encapContentInfo struct {
	EContentType asn1.ObjectIdentifier
	EContent     asn1.RawValue `asn1:"optional,explicit,tag:0"`
}

type issuerAndSerial struct {
	Issuer asn1.RawValue
	Serial *big.Int
}

type signerInfo struct {
	Version            int
	SID                issuerAndSerial
	DigestAlgorithm    pkix.AlgorithmIdentifier
	SignedAttrs        asn1.RawValue `asn1:"optional,tag:0"`
	SignatureAlgorithm pkix.AlgorithmIdentifier
	Signature          []byte
	UnsignedAttrs      asn1.RawValue `asn1:"optional,tag:1"`
}

type attribute struct {
	Type   asn1.ObjectIdentifier
	Values asn1.RawValue `asn1:"set"`
}

// RFC 5035.
type essCertIDv2 struct {
	CertHash     []byte
	IssuerSerial issuerSerial
}

type issuerSerial struct {
	Issuer asn1.RawValue // GeneralNames
	Serial *big.Int
}

type signingCertificateV2 struct {
	Certs []essCertIDv2
}

// RFC 3161.
type messageImprint struct {
	HashAlgorithm pkix.AlgorithmIdentifier
	HashedMessage []byte
}

type timeStampReq struct {
	Version        int
	MessageImprint messageImprint
	ReqPolicy      asn1.ObjectIdentifier `asn1:"optional"`
	Nonce          *big.Int              `asn1:"optional"`
	CertReq        bool                  `asn1:"optional,default:false"`
}

type pkiStatusInfo struct {
	Status       int
	StatusString []asn1.RawValue `asn1:"optional"`
	FailInfo     asn1.BitString  `asn1:"optional"`
}

type timeStampResp struct {
	Status         pkiStatusInfo
	TimeStampToken asn1.RawValue `asn1:"optional"`
}

// TSTInfo is the content of a timestamp token (RFC 3161 section 2.4.2).
type TSTInfo struct {
	Version        int
	Policy         asn1.ObjectIdentifier
	MessageImprint messageImprint
	SerialNumber   *big.Int
	GenTime        time.Time     `asn1:"generalized"`
	Accuracy       Accuracy      `asn1:"optional"`
	Ordering       bool          `asn1:"optional,default:false"`
	Nonce          *big.Int      `asn1:"optional"`
	TSA            asn1.RawValue `asn1:"optional,tag:0"`
	Extensions     asn1.RawValue `asn1:"optional,tag:1"`
}

// Accuracy of a TSTInfo's genTime.
type Accuracy struct {
	Seconds int `asn1:"optional"`
	Millis  int `asn1:"optional,tag:0"`
	Micros  int `asn1:"optional,tag:1"`
}
