package cms

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"time"
)

// ErrTimestamp wraps failures to obtain a timestamp.
var ErrTimestamp = errors.New("cms: timestamp")

// TSAClient obtains RFC 3161 timestamp tokens over HTTP.
type TSAClient struct {
	URL  string
	HTTP *http.Client // nil: a client with a 15 s timeout
}

// Timestamp POSTs a TimeStampReq (SHA-256 of data, a random nonce, certReq) and returns the
// TimeStampToken after checking status, imprint, nonce and the token's CMS signature.
// Errors wrap ErrTimestamp.
func (c TSAClient) Timestamp(ctx context.Context, data []byte) ([]byte, error) {
	sum := sha256.Sum256(data)
	return c.TimestampDigest(ctx, sum[:])
}

// TimestampDigest is Timestamp for data known by its SHA-256 digest (a document timestamp's
// byte ranges, hashed without joining them). Errors wrap ErrTimestamp.
func (c TSAClient) TimestampDigest(ctx context.Context, digest []byte) ([]byte, error) {
	if len(digest) != sha256.Size {
		return nil, fmt.Errorf("%w: digest must be SHA-256", ErrTimestamp)
	}
	var sum [sha256.Size]byte
	copy(sum[:], digest)
	nonce, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		return nil, err
	}
	req, err := asn1.Marshal(timeStampReq{
		Version:        1,
		MessageImprint: messageImprint{HashAlgorithm: pkix.AlgorithmIdentifier{Algorithm: OIDSHA256, Parameters: asn1Null}, HashedMessage: sum[:]},
		Nonce:          nonce,
		CertReq:        true,
	})
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(req))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTimestamp, err)
	}
	hr.Header.Set("Content-Type", "application/timestamp-query")
	client := c.HTTP
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	resp, err := client.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("%w: request: %v", ErrTimestamp, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: read: %v", ErrTimestamp, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: TSA answered HTTP %d", ErrTimestamp, resp.StatusCode)
	}
	var tr timeStampResp
	if _, err := asn1.Unmarshal(body, &tr); err != nil {
		return nil, fmt.Errorf("%w: malformed TimeStampResp: %v", ErrTimestamp, err)
	}
	if tr.Status.Status != 0 && tr.Status.Status != 1 {
		return nil, fmt.Errorf("%w: TSA refused with status %d", ErrTimestamp, tr.Status.Status)
	}
	tok := tr.TimeStampToken.FullBytes
	info, _, err := VerifyTimestampDigest(tok, sum[:])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTimestamp, err)
	}
	if info.Nonce == nil || info.Nonce.Cmp(nonce) != 0 {
		return nil, fmt.Errorf("%w: nonce mismatch", ErrTimestamp)
	}
	return tok, nil
}

// VerifyTimestamp checks a TimeStampToken: its CMS signature, that it holds a TSTInfo and
// that the imprint is the SHA-256 of data. Errors wrap ErrVerify.
func VerifyTimestamp(token, data []byte) (*TSTInfo, *Signed, error) {
	sum := sha256.Sum256(data)
	return VerifyTimestampDigest(token, sum[:])
}

// VerifyTimestampDigest is VerifyTimestamp for data known by its SHA-256 digest. Errors wrap
// ErrVerify.
func VerifyTimestampDigest(token, digest []byte) (*TSTInfo, *Signed, error) {
	s, err := Verify(token, nil)
	if err != nil {
		return nil, nil, err
	}
	if !s.ContentType.Equal(OIDTSTInfo) {
		return nil, nil, fail("timestamp token does not hold a TSTInfo")
	}
	var info TSTInfo
	if _, err := asn1.Unmarshal(s.Content, &info); err != nil {
		return nil, nil, fail("TSTInfo: %v", err)
	}
	if !info.MessageImprint.HashAlgorithm.Algorithm.Equal(OIDSHA256) ||
		subtle.ConstantTimeCompare(info.MessageImprint.HashedMessage, digest) != 1 {
		return nil, nil, fail("timestamp imprint does not match")
	}
	return &info, s, nil
}

// TSTInfoFor builds a TSTInfo for a request; used by test TSAs and local stand-ins.
// Errors: malformed request.
func TSTInfoFor(request []byte, serial *big.Int, policy asn1.ObjectIdentifier, at time.Time) ([]byte, bool, error) {
	var req timeStampReq
	if _, err := asn1.Unmarshal(request, &req); err != nil {
		return nil, false, fmt.Errorf("cms: malformed TimeStampReq: %w", err)
	}
	der, err := asn1.Marshal(TSTInfo{
		Version: 1, Policy: policy, MessageImprint: req.MessageImprint,
		SerialNumber: serial, GenTime: at.UTC().Truncate(time.Second), Nonce: req.Nonce,
	})
	return der, req.CertReq, err
}

// TimeStampResponse wraps a token as a granted TimeStampResp.
func TimeStampResponse(token []byte) ([]byte, error) {
	return asn1.Marshal(timeStampResp{Status: pkiStatusInfo{Status: 0}, TimeStampToken: asn1.RawValue{FullBytes: token}})
}
