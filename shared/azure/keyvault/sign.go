package keyvault

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"

	"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys"

	"github.com/esign-svc/esign/shared/pdf/cms"
)

var _ crypto.Signer = (*Signer)(nil)

// Public is the key's public part.
func (s *Signer) Public() crypto.PublicKey { return s.pub }

// KeyID is the key with the version Sign uses.
func (s *Signer) KeyID() KeyID { return s.id }

// algorithm maps a digest's hash (and PSS) to the vault's signature algorithm for this key,
// from an explicit allow-list: RS256/384/512 and PS256/384/512 (salt as long as the hash) for
// RSA, ES256 on P-256, ES384 on P-384 and ES512 on P-521 for EC. Anything else is refused.
func (s *Signer) algorithm(digest []byte, opts crypto.SignerOpts) (azkeys.SignatureAlgorithm, error) {
	if opts == nil {
		return "", errors.New("keyvault: sign needs the digest's hash")
	}
	h := opts.HashFunc()
	bits := map[crypto.Hash]string{crypto.SHA256: "256", crypto.SHA384: "384", crypto.SHA512: "512"}[h]
	if bits == "" {
		return "", fmt.Errorf("keyvault: hash %v is not allowed (SHA-256, SHA-384 or SHA-512)", h)
	}
	if len(digest) != h.Size() {
		return "", fmt.Errorf("keyvault: digest has %d bytes, %v needs %d", len(digest), h, h.Size())
	}
	switch pub := s.pub.(type) {
	case *rsa.PublicKey:
		if pss, ok := opts.(*rsa.PSSOptions); ok {
			if pss.SaltLength != rsa.PSSSaltLengthEqualsHash && pss.SaltLength != h.Size() {
				return "", errors.New("keyvault: RSA-PSS with a salt other than the hash's length is not allowed")
			}
			return azkeys.SignatureAlgorithm("PS" + bits), nil
		}
		return azkeys.SignatureAlgorithm("RS" + bits), nil
	case *ecdsa.PublicKey:
		if _, ok := opts.(*rsa.PSSOptions); ok {
			return "", errors.New("keyvault: PSS options with an EC key")
		}
		if want := map[string]string{"256": "P-256", "384": "P-384", "512": "P-521"}[bits]; pub.Curve.Params().Name != want {
			return "", fmt.Errorf("keyvault: %v with a %s key is not allowed (ES%s needs %s)", h, pub.Curve.Params().Name, bits, want)
		}
		return azkeys.SignatureAlgorithm("ES" + bits), nil
	}
	return "", fmt.Errorf("keyvault: key type %T", s.pub)
}

// Sign signs digest with the vault's sign operation (rand is not used: the vault draws its
// own). ECDSA signatures, raw r||s from the vault, come back ASN.1 DER as crypto.Signer
// promises; every signature is checked against the public key before it is returned.
func (s *Signer) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	alg, err := s.algorithm(digest, opts)
	if err != nil {
		return nil, err
	}
	sign := func(d []byte) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		res, err := s.client.Sign(ctx, s.id.Name, s.id.Version, azkeys.SignParameters{Algorithm: &alg, Value: d}, nil)
		if err != nil {
			return nil, fmt.Errorf("keyvault: sign with key %s: %w", s.id, err)
		}
		if res.KID == nil || res.KID.Name() != s.id.Name || res.KID.Version() != s.id.Version {
			return nil, fmt.Errorf("keyvault: sign with key %s: answer names another key", s.id)
		}
		return res.Result, nil
	}
	switch pub := s.pub.(type) {
	case *ecdsa.PublicKey:
		der, err := cms.RawECDSASigner{Key: pub, SignRaw: sign}.Sign(nil, digest, opts)
		if err != nil {
			return nil, err
		}
		if !ecdsa.VerifyASN1(pub, digest, der) {
			return nil, fmt.Errorf("keyvault: sign with key %s: the signature does not verify", s.id)
		}
		return der, nil
	case *rsa.PublicKey:
		sig, err := sign(digest)
		if err != nil {
			return nil, err
		}
		if pss, ok := opts.(*rsa.PSSOptions); ok {
			err = rsa.VerifyPSS(pub, opts.HashFunc(), digest, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: pss.Hash})
		} else {
			err = rsa.VerifyPKCS1v15(pub, opts.HashFunc(), digest, sig)
		}
		if err != nil {
			return nil, fmt.Errorf("keyvault: sign with key %s: the signature does not verify", s.id)
		}
		return sig, nil
	}
	return nil, fmt.Errorf("keyvault: key type %T", s.pub)
}
