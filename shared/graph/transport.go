package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// call is one Graph request. body is replayed on each attempt, so it is held in memory
// (JSON bodies and upload ranges of at most MaxChunkSize).
type call struct {
	method  string
	url     string
	body    []byte
	header  http.Header
	auth    bool   // send the bearer token (never to an upload session URL)
	stage   string // for error mapping: stageSite, stageDrives, stageUpload, stageRange
	okCodes []int
}

const (
	stageSite   = "site"
	stageDrives = "drives"
	stageUpload = "upload"
	stageRange  = "range"
)

// do sends c with bounded retries and returns the successful response (body unread) or an
// *apperr.Error. Retried: 429 and 5xx (waiting Retry-After when given, else 1s, 2s, 4s...),
// transport errors, and one 401 after dropping the cached token.
func (cl *Client) do(ctx context.Context, c call) (*http.Response, error) {
	var lastErr error
	var lastRetryAfter time.Duration
	reauthed := false
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, c.method, c.url, bytes.NewReader(c.body))
		if err != nil {
			return nil, fmt.Errorf("graph: build %s request: %w", c.stage, redactURLError(err))
		}
		for k, v := range c.header {
			req.Header[k] = v
		}
		req.ContentLength = int64(len(c.body))
		var tok string
		if c.auth {
			if tok, err = cl.tokens.token(ctx); err != nil {
				return nil, err
			}
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := cl.http.Do(req)
		var wait time.Duration
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			lastErr = redactURLError(err)
			wait = backoff(attempt)
		case isOK(resp.StatusCode, c.okCodes):
			return resp, nil
		case resp.StatusCode == http.StatusUnauthorized && c.auth && !reauthed:
			drain(resp)
			cl.tokens.invalidate(tok)
			reauthed = true
			attempt--
			continue // does not count as a retry: a token expiring early is normal
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 && resp.StatusCode != http.StatusInsufficientStorage:
			lastErr = fmt.Errorf("graph %s: status %d%s", c.stage, resp.StatusCode, requestID(resp))
			lastRetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
			wait = lastRetryAfter
			if resp.Header.Get("Retry-After") == "" {
				wait = backoff(attempt)
			}
			drain(resp)
		default:
			defer resp.Body.Close()
			return nil, mapStatus(resp, c.stage)
		}
		if attempt >= cl.maxRetries || wait > cl.maxRetryWait {
			return nil, &apperr.Error{Kind: apperr.KindUnavailable, Code: "graph_unavailable",
				Detail:     "Microsoft Graph is busy or unavailable; try again later",
				RetryAfter: lastRetryAfter, Err: lastErr}
		}
		if err := cl.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

func isOK(code int, ok []int) bool {
	for _, c := range ok {
		if c == code {
			return true
		}
	}
	return false
}

func backoff(attempt int) time.Duration {
	if attempt > 5 {
		attempt = 5
	}
	return time.Second << attempt
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// parseRetryAfter reads delay-seconds or an HTTP date; 0 when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now).Round(time.Second)
	}
	return 0
}

func requestID(resp *http.Response) string {
	if id := resp.Header.Get("request-id"); id != "" && safeCode(strings.ReplaceAll(id, "-", "_")) == strings.ReplaceAll(id, "-", "_") {
		return " (request-id " + id + ")"
	}
	return ""
}

// graphError is Graph's error body: {"error": {"code": "...", "message": "..."}}.
type graphError struct {
	Error struct {
		Code string `json:"code"`
	} `json:"error"`
}

// mapStatus turns a final non-success Graph answer into an *apperr.Error.
func mapStatus(resp *http.Response, stage string) error {
	var ge graphError
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&ge)
	code := safeCode(ge.Error.Code)
	cause := fmt.Errorf("graph %s: status %d, error %q%s", stage, resp.StatusCode, code, requestID(resp))
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return apperr.Wrap(cause, apperr.KindUnavailable, "graph_auth_failed",
			"Microsoft Graph refused the integration's token; check the app registration settings")
	case http.StatusForbidden:
		return apperr.Wrap(cause, apperr.KindForbidden, "graph_forbidden",
			"the integration's app registration lacks admin-consented write access to the document library (grant Sites.ReadWrite.All, or Sites.Selected with write on this site)")
	case http.StatusNotFound:
		field, what := FieldSiteURL, "the SharePoint site was not found"
		if stage == stageUpload {
			field, what = FieldLibraryPath, "the document library was not found"
		}
		if stage == stageRange {
			return apperr.Wrap(cause, apperr.KindUnavailable, "graph_unavailable",
				"the upload session expired before the upload finished; try again")
		}
		e := apperr.Invalid("sharepoint_target_not_found", apperr.Field(field, what))
		e.Err = cause
		return e
	case http.StatusConflict:
		return apperr.Wrap(cause, apperr.KindConflict, "sharepoint_conflict",
			"the document library refused the file name because an item with that name is in the way")
	case http.StatusRequestEntityTooLarge:
		return apperr.Wrap(cause, apperr.KindTooLarge, "sharepoint_file_too_large", "the document library refused the file size")
	case http.StatusInsufficientStorage:
		return apperr.Wrap(cause, apperr.KindUnavailable, "sharepoint_insufficient_storage",
			"the document library's storage quota is exhausted")
	case http.StatusBadRequest:
		return apperr.Wrap(cause, apperr.KindInvalid, "sharepoint_upload_rejected",
			"Microsoft Graph rejected the request for this target (%s)", code)
	}
	return apperr.Wrap(cause, apperr.KindInternal, "graph_unexpected_status", "unexpected answer from Microsoft Graph")
}

// decodeJSON reads a bounded JSON response body into v.
func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(v); err != nil {
		return apperr.Wrap(fmt.Errorf("graph: decode response: %w", err), apperr.KindInternal,
			"graph_bad_response", "unreadable answer from Microsoft Graph")
	}
	return nil
}

var errShortReader = errors.New("graph: the reader ended before the declared size")
