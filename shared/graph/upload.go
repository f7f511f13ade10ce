package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// UploadResult is the stored file. Name can differ from the requested name: see Upload.
type UploadResult struct {
	DriveID string `json:"driveId"`
	ItemID  string `json:"itemId"`
	WebURL  string `json:"webUrl"`
	Name    string `json:"name"`
	Size    int64  `json:"size"`
}

// conflictBehavior is "rename": a delivery must never overwrite a document already in the
// customer's library (two records of a batch can render to the same file name, and a
// replaced file hides what was delivered earlier), and failing would lose a delivery over a
// harmless name clash. Graph keeps both and names the new one "name 1.pdf"; UploadResult.Name
// tells the caller the name it got.
const conflictBehavior = "rename"

type driveItem struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Size            int64  `json:"size"`
	WebURL          string `json:"webUrl"`
	ParentReference struct {
		DriveID string `json:"driveId"`
	} `json:"parentReference"`
}

type uploadSession struct {
	UploadURL          string   `json:"uploadUrl"`
	NextExpectedRanges []string `json:"nextExpectedRanges"`
}

// Upload stores size bytes read from r as folderPath/fileName in the target library, creating
// missing folders. Files up to SimpleUploadMax go in one PUT; larger ones stream through an
// upload session in ranges of the configured chunk size, so at most one chunk is in memory.
//
// Errors (all *apperr.Error unless the context ends or r misbehaves):
//   - KindInvalid `invalid_sharepoint_target`: the target or file name is malformed (fields
//     sharePointTarget.siteUrl, .libraryPath, .folderPath, documentName);
//   - KindInvalid `sharepoint_target_not_found`: Graph has no such site (siteUrl) or the site
//     no such library (libraryPath);
//   - KindForbidden `graph_forbidden`: the app registration lacks admin-consented write access;
//   - KindUnavailable `graph_auth_failed`: the token request failed (wrong tenant, id, secret);
//   - KindUnavailable `graph_unavailable`: 429/5xx persisted through the bounded retries
//     (RetryAfter set when Graph said how long to wait), or an upload session expired;
//   - KindConflict, KindTooLarge, KindInvalid `sharepoint_upload_rejected` for other refusals;
//   - a plain error when r yields fewer or more than size bytes (the session is cancelled).
func (cl *Client) Upload(ctx context.Context, t Target, fileName string, r io.Reader, size int64) (UploadResult, error) {
	if size < 0 {
		return UploadResult{}, fmt.Errorf("graph: negative upload size %d", size)
	}
	chk, err := cl.check(t, fileName)
	if err != nil {
		return UploadResult{}, err
	}
	s, err := cl.resolveSite(ctx, chk.site)
	if err != nil {
		return UploadResult{}, err
	}
	d, err := cl.resolveDrive(ctx, s.ID, chk.library)
	if err != nil {
		return UploadResult{}, err
	}
	itemBase := cl.graphURL("drives/" + escapeID(d.ID) + "/root:/" +
		escapePath(append(append([]string{}, chk.folder...), chk.file)) + ":")

	var item driveItem
	if size <= SimpleUploadMax {
		item, err = cl.uploadSmall(ctx, itemBase, chk.file, r, size)
	} else {
		item, err = cl.uploadLarge(ctx, itemBase, chk.file, r, size)
	}
	if err != nil {
		return UploadResult{}, err
	}
	res := UploadResult{DriveID: item.ParentReference.DriveID, ItemID: item.ID, WebURL: item.WebURL, Name: item.Name, Size: item.Size}
	if res.DriveID == "" {
		res.DriveID = d.ID
	}
	if res.ItemID == "" {
		return UploadResult{}, apperr.New(apperr.KindInternal, "graph_bad_response", "Microsoft Graph returned an item without an id")
	}
	return res, nil
}

// uploadSmall: PUT /drives/{drive-id}/root:/{path}:/content?@microsoft.graph.conflictBehavior=rename
func (cl *Client) uploadSmall(ctx context.Context, itemBase, name string, r io.Reader, size int64) (driveItem, error) {
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return driveItem{}, fmt.Errorf("%w: %v", errShortReader, err)
	}
	if err := expectEOF(r); err != nil {
		return driveItem{}, err
	}
	resp, err := cl.do(ctx, call{
		method: http.MethodPut, url: itemBase + "/content?@microsoft.graph.conflictBehavior=" + conflictBehavior,
		body: body, auth: true, stage: stageUpload, okCodes: []int{http.StatusOK, http.StatusCreated},
		header: http.Header{"Content-Type": {contentType(name)}, "Accept": {"application/json"}},
	})
	if err != nil {
		return driveItem{}, err
	}
	var item driveItem
	return item, decodeJSON(resp, &item)
}

// uploadLarge: POST .../root:/{path}:/createUploadSession, then PUT ranges to uploadUrl
// without the Authorization header (the documentation warns it can cause 401 there).
func (cl *Client) uploadLarge(ctx context.Context, itemBase, name string, r io.Reader, size int64) (driveItem, error) {
	reqBody, _ := json.Marshal(map[string]any{"item": map[string]any{
		"@microsoft.graph.conflictBehavior": conflictBehavior,
		"name":                              name,
	}})
	resp, err := cl.do(ctx, call{
		method: http.MethodPost, url: itemBase + "/createUploadSession", body: reqBody, auth: true,
		stage: stageUpload, okCodes: []int{http.StatusOK, http.StatusCreated},
		header: http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}},
	})
	if err != nil {
		return driveItem{}, err
	}
	var sess uploadSession
	if err := decodeJSON(resp, &sess); err != nil {
		return driveItem{}, err
	}
	if u, perr := url.Parse(sess.UploadURL); perr != nil || u.Scheme != "https" || u.Host == "" {
		return driveItem{}, apperr.New(apperr.KindInternal, "graph_bad_response", "Microsoft Graph returned an unusable upload URL")
	}

	item, err := cl.sendRanges(ctx, sess.UploadURL, r, size)
	if err != nil {
		cl.cancelSession(ctx, sess.UploadURL)
	}
	return item, err
}

func (cl *Client) sendRanges(ctx context.Context, uploadURL string, r io.Reader, size int64) (driveItem, error) {
	buf := make([]byte, cl.chunkSize)
	for off := int64(0); off < size; {
		n := int64(len(buf))
		if size-off < n {
			n = size - off
		}
		chunk := buf[:n]
		if _, err := io.ReadFull(r, chunk); err != nil {
			return driveItem{}, fmt.Errorf("%w: %v", errShortReader, err)
		}
		last := off+n == size
		if last {
			if err := expectEOF(r); err != nil {
				return driveItem{}, err
			}
		}
		resp, err := cl.do(ctx, call{
			method: http.MethodPut, url: uploadURL, body: chunk, stage: stageRange,
			okCodes: []int{http.StatusOK, http.StatusCreated, http.StatusAccepted},
			header:  http.Header{"Content-Range": {fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, size)}},
		})
		if err != nil {
			return driveItem{}, err
		}
		off += n
		if resp.StatusCode == http.StatusAccepted {
			var st uploadSession
			if err := decodeJSON(resp, &st); err != nil {
				return driveItem{}, err
			}
			if last || !expects(st.NextExpectedRanges, off) {
				return driveItem{}, apperr.New(apperr.KindInternal, "graph_bad_response",
					"the upload session is out of step with the bytes sent")
			}
			continue
		}
		if !last {
			drain(resp)
			return driveItem{}, apperr.New(apperr.KindInternal, "graph_bad_response", "the upload session completed early")
		}
		var item driveItem
		return item, decodeJSON(resp, &item)
	}
	return driveItem{}, apperr.New(apperr.KindInternal, "graph_bad_response", "the upload session did not complete")
}

// expects reports whether Graph's next expected ranges start where we are ("1234-" or
// "1234-5678"); an absent list is accepted.
func expects(ranges []string, off int64) bool {
	if len(ranges) == 0 {
		return true
	}
	start, _, _ := strings.Cut(ranges[0], "-")
	n, err := strconv.ParseInt(start, 10, 64)
	return err == nil && n == off
}

// cancelSession deletes an unfinished upload session (best effort) so its bytes are dropped.
func (cl *Client) cancelSession(ctx context.Context, uploadURL string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, uploadURL, nil)
	if err != nil {
		return
	}
	if resp, err := cl.http.Do(req); err == nil {
		drain(resp)
	}
}

func expectEOF(r io.Reader) error {
	var one [1]byte
	n, err := io.ReadFull(r, one[:])
	if n > 0 {
		return errors.New("graph: the reader holds more than the declared size")
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("graph: read: %w", err)
	}
	return nil
}

func contentType(name string) string {
	if strings.HasSuffix(strings.ToLower(name), ".pdf") {
		return "application/pdf"
	}
	return "application/octet-stream"
}
