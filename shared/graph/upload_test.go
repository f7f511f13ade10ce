package graph

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/esign-svc/esign/shared/apperr"
)

var legal = Target{SiteURL: "https://contoso.sharepoint.com/sites/Legal", LibraryPath: "Documents", FolderPath: "Contracts 2024/Ünïcode Über"}

// newTestClient builds a client on the fake whose sleeps are recorded, not waited.
func newTestClient(t *testing.T, cfg Config) (*Client, *[]time.Duration) {
	t.Helper()
	cl, err := NewClient(cfg)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	var mu sync.Mutex
	var slept []time.Duration
	cl.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		slept = append(slept, d)
		return ctx.Err()
	}
	return cl, &slept
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUploadSmallEscapesPathAndSendsContent(t *testing.T) {
	t.Parallel()
	f := newFakeGraph(t)
	cl, _ := newTestClient(t, f.config())
	content := randomBytes(t, 70_000)

	res, err := cl.Upload(context.Background(), legal, "Vertrag März #1+2.pdf", bytes.NewReader(content), int64(len(content)))
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	wantPath := "/v1.0/drives/b!docs-1/root:/Contracts%202024/%C3%9Cn%C3%AFcode%20%C3%9Cber/Vertrag%20M%C3%A4rz%20%231%2B2.pdf:/content"
	if len(f.uploadPaths) != 1 || f.uploadPaths[0] != wantPath {
		t.Fatalf("upload paths %q, want [%q]", f.uploadPaths, wantPath)
	}
	got := f.files["b!docs-1|Contracts 2024/Ünïcode Über/Vertrag März #1+2.pdf"]
	if !bytes.Equal(got, content) {
		t.Fatalf("server received %d bytes, not the %d sent", len(got), len(content))
	}
	if res.DriveID != "b!docs-1" || res.ItemID == "" || res.Name != "Vertrag März #1+2.pdf" || res.Size != int64(len(content)) ||
		!strings.HasPrefix(res.WebURL, "https://contoso.sharepoint.com/sites/Legal/") {
		t.Fatalf("result %+v", res)
	}
	if f.count("token") != 1 || f.count("site") != 1 || f.count("drives") != 2 {
		t.Fatalf("calls token=%d site=%d drives=%d (drives are paged one per page)", f.count("token"), f.count("site"), f.count("drives"))
	}
}

func TestUploadLargeUsesContiguousSessionRanges(t *testing.T) {
	t.Parallel()
	f := newFakeGraph(t)
	cl, _ := newTestClient(t, f.config())
	content := randomBytes(t, SimpleUploadMax+12_345)

	res, err := cl.Upload(context.Background(), Target{SiteURL: legal.SiteURL, LibraryPath: "shared documents"}, "big file.pdf",
		bytes.NewReader(content), int64(len(content)))
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if want := "/v1.0/drives/b!docs-1/root:/big%20file.pdf:/createUploadSession"; len(f.uploadPaths) != 1 || f.uploadPaths[0] != want {
		t.Fatalf("upload paths %q, want [%q]", f.uploadPaths, want)
	}
	if got := f.files["b!docs-1|big file.pdf"]; !bytes.Equal(got, content) {
		t.Fatalf("server assembled %d bytes, not the %d sent", len(got), len(content))
	}
	wantRanges := (len(content) + 3*ChunkUnit - 1) / (3 * ChunkUnit)
	if len(f.ranges) != wantRanges {
		t.Fatalf("%d ranges, want %d", len(f.ranges), wantRanges)
	}
	var next int64
	for i, r := range f.ranges {
		if r.start != next || r.total != int64(len(content)) || r.hadAuth {
			t.Fatalf("range %d = %+v, want start %d total %d without auth", i, r, next, len(content))
		}
		if i < len(f.ranges)-1 && r.length%ChunkUnit != 0 {
			t.Fatalf("range %d length %d not a multiple of 320 KiB", i, r.length)
		}
		next = r.end + 1
	}
	if next != int64(len(content)) || res.Size != int64(len(content)) || res.Name != "big file.pdf" {
		t.Fatalf("ranges end at %d; result %+v", next, res)
	}
}

func TestUploadShortReaderCancelsSession(t *testing.T) {
	t.Parallel()
	f := newFakeGraph(t)
	cl, _ := newTestClient(t, f.config())
	content := randomBytes(t, SimpleUploadMax+1000)

	_, err := cl.Upload(context.Background(), legal, "x.pdf", bytes.NewReader(content[:SimpleUploadMax-10]), int64(len(content)))
	if !errors.Is(err, errShortReader) {
		t.Fatalf("err = %v, want errShortReader", err)
	}
	if len(f.deleted) != 1 {
		t.Fatalf("upload session not cancelled: deleted %v", f.deleted)
	}
	_, err = cl.Upload(context.Background(), legal, "y.pdf", bytes.NewReader(content[:20]), 10)
	if err == nil || !strings.Contains(err.Error(), "more than the declared size") {
		t.Fatalf("longer reader: err = %v", err)
	}
}

func TestTokenIsCachedAcrossUploads(t *testing.T) {
	t.Parallel()
	f := newFakeGraph(t)
	cl, _ := newTestClient(t, f.config())
	for i := 0; i < 4; i++ {
		if _, err := cl.Upload(context.Background(), legal, "doc.pdf", strings.NewReader("%PDF-1.7"), 8); err != nil {
			t.Fatalf("upload %d: %v", i, err)
		}
	}
	if n := f.count("token"); n != 1 {
		t.Fatalf("%d token requests for 4 uploads, want 1", n)
	}
}

func TestTokenRefreshedNearExpiry(t *testing.T) {
	t.Parallel()
	f := newFakeGraph(t)
	cl, _ := newTestClient(t, f.config())
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	src := cl.tokens.(*secretSource)
	src.now = func() time.Time { return now }

	upload := func() {
		t.Helper()
		if _, err := cl.Upload(context.Background(), legal, "doc.pdf", strings.NewReader("abc"), 3); err != nil {
			t.Fatal(err)
		}
	}
	upload()
	now = now.Add(time.Hour - refreshMargin - time.Second) // still inside the cached window
	upload()
	if n := f.count("token"); n != 1 {
		t.Fatalf("%d token requests before the refresh margin, want 1", n)
	}
	now = now.Add(2 * time.Second) // inside the margin: refresh
	upload()
	if n := f.count("token"); n != 2 {
		t.Fatalf("%d token requests after the refresh margin, want 2", n)
	}
}

func TestGraph401RefetchesTokenOnce(t *testing.T) {
	t.Parallel()
	f := newFakeGraph(t)
	cl, _ := newTestClient(t, f.config())
	f.failNext("site", injected{status: 401, code: "InvalidAuthenticationToken"})
	if _, err := cl.Upload(context.Background(), legal, "doc.pdf", strings.NewReader("abc"), 3); err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if n := f.count("token"); n != 2 {
		t.Fatalf("%d token requests, want 2 (one refetch after 401)", n)
	}
}

func TestErrorMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		kind      string
		inj       []injected
		target    Target
		size      int
		wantKind  apperr.Kind
		wantCode  string
		wantField string
	}{
		{name: "403 on site lookup (Sites.Selected not granted)", kind: "site", inj: []injected{{status: 403, code: "accessDenied"}},
			wantKind: apperr.KindForbidden, wantCode: "graph_forbidden"},
		{name: "403 on upload (read-only consent)", kind: "content", inj: []injected{{status: 403, code: "accessDenied"}},
			wantKind: apperr.KindForbidden, wantCode: "graph_forbidden"},
		{name: "403 on upload session", kind: "session", size: SimpleUploadMax + 1, inj: []injected{{status: 403, code: "accessDenied"}},
			wantKind: apperr.KindForbidden, wantCode: "graph_forbidden"},
		{name: "404 site", target: Target{SiteURL: "https://contoso.sharepoint.com/sites/Nope", LibraryPath: "Documents"},
			wantKind: apperr.KindInvalid, wantCode: "sharepoint_target_not_found", wantField: FieldSiteURL},
		{name: "library not on site", target: Target{SiteURL: legal.SiteURL, LibraryPath: "Archive"},
			wantKind: apperr.KindInvalid, wantCode: "sharepoint_target_not_found", wantField: FieldLibraryPath},
		{name: "404 on upload (library deleted)", kind: "content", inj: []injected{{status: 404, code: "itemNotFound"}},
			wantKind: apperr.KindInvalid, wantCode: "sharepoint_target_not_found", wantField: FieldLibraryPath},
		{name: "token endpoint 401", kind: "token", inj: []injected{{status: 401, code: "invalid_client"}},
			wantKind: apperr.KindUnavailable, wantCode: "graph_auth_failed"},
		{name: "503 persists", kind: "content", inj: []injected{{status: 503}, {status: 503}, {status: 503}, {status: 503}},
			wantKind: apperr.KindUnavailable, wantCode: "graph_unavailable"},
		{name: "429 asks for longer than the client waits", kind: "site", inj: []injected{{status: 429, retryAfter: "120"}},
			wantKind: apperr.KindUnavailable, wantCode: "graph_unavailable"},
		{name: "409 conflict", kind: "content", inj: []injected{{status: 409, code: "nameAlreadyExists"}},
			wantKind: apperr.KindConflict, wantCode: "sharepoint_conflict"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeGraph(t)
			cl, _ := newTestClient(t, f.config())
			f.failNext(tc.kind, tc.inj...)
			target := tc.target
			if target.SiteURL == "" {
				target = legal
			}
			size := tc.size
			if size == 0 {
				size = 100
			}
			_, err := cl.Upload(context.Background(), target, "doc.pdf", bytes.NewReader(make([]byte, size)), int64(size))
			e, ok := apperr.As(err)
			if !ok || e.Kind != tc.wantKind || e.Code != tc.wantCode {
				t.Fatalf("err = %v, want kind %d code %s", err, tc.wantKind, tc.wantCode)
			}
			if tc.wantField != "" && (len(e.Fields) != 1 || e.Fields[0].Field != tc.wantField) {
				t.Fatalf("fields %+v, want %s", e.Fields, tc.wantField)
			}
			if tc.wantCode == "graph_forbidden" && !strings.Contains(e.Detail, "admin-consented write access") {
				t.Fatalf("detail %q does not explain the missing consent", e.Detail)
			}
			for _, leak := range []string{f.secret, "access-token-", "tempauth"} {
				if strings.Contains(err.Error(), leak) {
					t.Fatalf("error %q leaks %q", err, leak)
				}
			}
		})
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		kind      string
		inj       []injected
		size      int
		wantSleep []time.Duration
	}{
		{name: "429 on site lookup", kind: "site", inj: []injected{{status: 429, retryAfter: "7"}}, size: 10,
			wantSleep: []time.Duration{7 * time.Second}},
		{name: "503 twice on simple upload", kind: "content", inj: []injected{{status: 503, retryAfter: "2"}, {status: 503, retryAfter: "3"}}, size: 10,
			wantSleep: []time.Duration{2 * time.Second, 3 * time.Second}},
		{name: "503 without Retry-After backs off", kind: "drives", inj: []injected{{status: 503}, {status: 503}}, size: 10,
			wantSleep: []time.Duration{time.Second, 2 * time.Second}},
		{name: "429 on a session range", kind: "range", inj: []injected{{status: 429, retryAfter: "5"}}, size: SimpleUploadMax + 1,
			wantSleep: []time.Duration{5 * time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeGraph(t)
			cl, slept := newTestClient(t, f.config())
			f.failNext(tc.kind, tc.inj...)
			content := randomBytes(t, tc.size)
			if _, err := cl.Upload(context.Background(), legal, "doc.pdf", bytes.NewReader(content), int64(len(content))); err != nil {
				t.Fatalf("Upload after retries: %v", err)
			}
			if got := f.files["b!docs-1|Contracts 2024/Ünïcode Über/doc.pdf"]; !bytes.Equal(got, content) {
				t.Fatalf("content differs after retries (%d bytes)", len(got))
			}
			if len(*slept) != len(tc.wantSleep) {
				t.Fatalf("slept %v, want %v", *slept, tc.wantSleep)
			}
			for i := range tc.wantSleep {
				if (*slept)[i] != tc.wantSleep[i] {
					t.Fatalf("slept %v, want %v", *slept, tc.wantSleep)
				}
			}
		})
	}
}

func TestUnavailableCarriesRetryAfter(t *testing.T) {
	t.Parallel()
	f := newFakeGraph(t)
	cl, slept := newTestClient(t, f.config())
	f.failNext("site", injected{status: 429, retryAfter: "120"})
	_, err := cl.Upload(context.Background(), legal, "doc.pdf", strings.NewReader("a"), 1)
	e, ok := apperr.As(err)
	if !ok {
		t.Fatalf("err = %v, want *apperr.Error", err)
	}
	if e.Kind != apperr.KindUnavailable || e.RetryAfter != 120*time.Second || len(*slept) != 0 {
		t.Fatalf("err %v (retryAfter %v), slept %v: want unavailable, RetryAfter 120s, no waiting", err, e.RetryAfter, *slept)
	}
}

type fakeCredential struct {
	mu     sync.Mutex
	scopes [][]string
}

func (c *fakeCredential) GetToken(_ context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scopes = append(c.scopes, o.Scopes)
	return azcore.AccessToken{Token: "managed-identity-token", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestManagedIdentityCredential(t *testing.T) {
	t.Parallel()
	f := newFakeGraph(t)
	f.valid["managed-identity-token"] = true
	cred := &fakeCredential{}
	cfg := f.config()
	cfg.TenantID, cfg.ClientID, cfg.ClientSecret, cfg.Credential = "", "", "", cred
	cl, _ := newTestClient(t, cfg)
	if _, err := cl.Upload(context.Background(), legal, "doc.pdf", strings.NewReader("abc"), 3); err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if f.count("token") != 0 {
		t.Fatalf("the token endpoint was called with a managed identity configured")
	}
	if len(cred.scopes) == 0 || len(cred.scopes[0]) != 1 || cred.scopes[0][0] != DefaultScope {
		t.Fatalf("scopes asked %v", cred.scopes)
	}
}
