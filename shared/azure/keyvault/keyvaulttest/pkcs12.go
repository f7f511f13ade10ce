package keyvaulttest

import (
	"crypto/x509"
	"encoding/asn1"
)

// contentInfo is a PKCS#7 ContentInfo: Content is its [0] element.
type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue
}

var (
	oidData     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidCertBag  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 3}
	oidX509Cert = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 22, 1}
)

// explicit0 is der as the content of an [0] EXPLICIT tag.
func explicit0(der []byte) asn1.RawValue {
	return asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: der}
}

// certificatesOnly is a PKCS#12 file (RFC 7292) of the chain alone, as Key Vault returns the
// certificate secret of a non-exportable key: one authenticated safe of certificate bags, no
// key, no password (and so no MAC).
func certificatesOnly(chain []*x509.Certificate) ([]byte, error) {
	var bags []asn1.RawValue
	for _, c := range chain {
		value, err := asn1.Marshal(c.Raw) // OCTET STRING
		if err != nil {
			return nil, err
		}
		certBag, err := asn1.Marshal(contentInfo{ContentType: oidX509Cert, Content: explicit0(value)})
		if err != nil {
			return nil, err
		}
		bag, err := asn1.Marshal(contentInfo{ContentType: oidCertBag, Content: explicit0(certBag)})
		if err != nil {
			return nil, err
		}
		bags = append(bags, asn1.RawValue{FullBytes: bag})
	}
	octet := func(v any) ([]byte, error) {
		der, err := asn1.Marshal(v)
		if err != nil {
			return nil, err
		}
		return asn1.Marshal(der)
	}
	safeContents, err := octet(bags)
	if err != nil {
		return nil, err
	}
	safe, err := asn1.Marshal(contentInfo{ContentType: oidData, Content: explicit0(safeContents)})
	if err != nil {
		return nil, err
	}
	authSafe, err := octet([]asn1.RawValue{{FullBytes: safe}})
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(struct {
		Version  int
		AuthSafe contentInfo
	}{3, contentInfo{ContentType: oidData, Content: explicit0(authSafe)}})
}
