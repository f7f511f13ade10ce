package blobstore

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// MaxReadURLTTL is the longest ReadURL lifetime: a user delegation key lives at most 7 days.
const MaxReadURLTTL = 7 * 24 * time.Hour

// clockSkew backdates a SAS start so that a client whose clock is a little behind can use it.
const clockSkew = 5 * time.Minute

// ReadURL returns a read-only URL for one blob, valid for ttl (0 < ttl <= MaxReadURLTTL), and
// when it expires. With a shared key it is a service SAS signed locally; under a token
// credential (managed identity) it is a user delegation SAS (the identity needs the
// "Storage Blob Delegator" role or a data role that includes generateUserDelegationKey).
// The blob must exist: a missing blob or container is KindNotFound (blob_not_found), so the
// caller never hands out a link that cannot work. A bad ttl is an internal error (a programming
// mistake, not a request's).
func (s *Store) ReadURL(ctx context.Context, container, name string, ttl time.Duration) (string, time.Time, error) {
	return s.readURL(ctx, container, name, ttl, "")
}

// DownloadURL is ReadURL whose answers carry Content-Disposition: attachment with filename (the
// SAS's rscd), so that a browser following it saves the file rather than showing it. filename is
// reduced to printable ASCII for the plain parameter and kept whole, percent-encoded, in
// filename*. Errors: ReadURL's.
func (s *Store) DownloadURL(ctx context.Context, container, name string, ttl time.Duration, filename string) (string, time.Time, error) {
	return s.readURL(ctx, container, name, ttl, AttachmentDisposition(filename))
}

// AttachmentDisposition is the Content-Disposition value of DownloadURL for filename ("download"
// when empty).
func AttachmentDisposition(filename string) string {
	if strings.TrimSpace(filename) == "" {
		filename = "download"
	}
	plain := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' || r == '/' {
			return '_'
		}
		return r
	}, filename)
	return `attachment; filename="` + plain + `"; filename*=UTF-8''` + strings.ReplaceAll(url.QueryEscape(filename), "+", "%20")
}

func (s *Store) readURL(ctx context.Context, container, name string, ttl time.Duration, disposition string) (string, time.Time, error) {
	if ttl <= 0 || ttl > MaxReadURLTTL {
		return "", time.Time{}, fmt.Errorf("blobstore: ReadURL ttl %s is outside (0, %s]", ttl, MaxReadURLTTL)
	}
	if _, err := s.Properties(ctx, container, name); err != nil {
		return "", time.Time{}, err
	}
	now := time.Now().UTC()
	expiry := now.Add(ttl).Truncate(time.Second)
	blobURL := s.client.ServiceClient().NewContainerClient(container).NewBlobClient(name).URL()
	v := sas.BlobSignatureValues{
		Protocol:           sas.ProtocolHTTPS,
		StartTime:          now.Add(-clockSkew).Truncate(time.Second),
		ExpiryTime:         expiry,
		Permissions:        (&sas.BlobPermissions{Read: true}).String(),
		ContainerName:      container,
		BlobName:           name,
		ContentDisposition: disposition,
	}
	if !strings.HasPrefix(blobURL, "https://") {
		v.Protocol = sas.ProtocolHTTPSandHTTP // Azurite speaks http
	}
	var qp sas.QueryParameters
	var err error
	if key := s.acct.BlobSharedKey(); key != nil {
		qp, err = v.SignWithSharedKey(key)
	} else {
		var udc *service.UserDelegationCredential
		if udc, err = s.udk.get(ctx, s.client.ServiceClient(), now, expiry); err == nil {
			qp, err = v.SignWithUserDelegation(udc)
		}
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("blobstore: sign read URL for %s/%s: %w", container, name, err)
	}
	return blobURL + "?" + qp.Encode(), expiry, nil
}

// udkCache keeps one user delegation key and renews it when a SAS would outlive it. Keys are
// asked for a day ahead (or up to the SAS's expiry, at most 7 days) so that most calls reuse one.
type udkCache struct {
	mu     sync.Mutex
	cred   *service.UserDelegationCredential
	expiry time.Time
}

func (c *udkCache) get(ctx context.Context, svc *service.Client, now, needUntil time.Time) (*service.UserDelegationCredential, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cred != nil && !c.expiry.Before(needUntil) {
		return c.cred, nil
	}
	until := now.Add(24 * time.Hour)
	if needUntil.After(until) {
		until = needUntil
	}
	if limit := now.Add(MaxReadURLTTL); until.After(limit) {
		until = limit
	}
	info := service.KeyInfo{
		Start:  to.Ptr(now.Add(-clockSkew).Format(sas.TimeFormat)),
		Expiry: to.Ptr(until.Format(sas.TimeFormat)),
	}
	cred, err := svc.GetUserDelegationCredential(ctx, info, nil)
	if err != nil {
		return nil, fmt.Errorf("get user delegation key: %w", err)
	}
	c.cred, c.expiry = cred, until
	return cred, nil
}
