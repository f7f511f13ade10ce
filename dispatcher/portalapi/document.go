package portalapi

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/logging"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// document is GET (and HEAD) /api/esign/document/{token}, {token} being the portal access
// token: it streams the session's PDF from blob storage to the signer's browser without
// buffering it (inline, no-store). A view-only (secondary) token may read it. The token is not
// refreshed here: the portal gets a fresh documentUrl with every session answer. Errors: 401
// for a bad or expired token; 410 once the session expired or was cancelled; 409 sealing or
// complete; 403 otp_required for a slot that must pass OTP first.
func (a *API) document(w http.ResponseWriter, r *http.Request) error {
	if err := web.NoBody(r); err != nil {
		return err
	}
	tok := r.PathValue("token")
	if tok == "" || len(tok) > tokens.MaxTokenLen {
		return apperr.New(apperr.KindUnauthenticated, tokens.CodeInvalid, "the document link lacks its token")
	}
	acc, err := a.authorize(r.Context(), tok)
	if err != nil {
		return err
	}
	if err := CheckDocumentOTP(acc.Slot); err != nil {
		return err
	}
	src, err := blobstore.ParsePath(acc.Session.PDFBlobPath)
	if err != nil {
		return apperr.Wrap(err, apperr.KindInternal, "pdf_path_invalid", "the session's document path is invalid")
	}
	setDocumentHeaders(w, acc.Session.DocumentID)
	if r.Method == http.MethodGet && r.Header.Get("Range") != "" {
		return a.documentRange(w, r, src)
	}
	if r.Method == http.MethodHead {
		props, err := a.Blobs.Properties(r.Context(), src.Container, src.Name)
		if err != nil {
			return documentErr(err)
		}
		setBlobHeaders(w, props)
		w.WriteHeader(http.StatusOK)
		return nil
	}
	body, props, err := a.Blobs.Open(r.Context(), src.Container, src.Name)
	if err != nil {
		return documentErr(err)
	}
	defer body.Close()
	setBlobHeaders(w, props)
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, body); err != nil {
		// The status is sent: nothing left to answer. Log the failure (no token, no path).
		logging.From(r.Context()).Warn().Err(err).Str("route", r.Pattern).Msg("document stream broken")
	}
	return nil
}

// documentRange answers a GET with a Range header: 206 with the one range asked for, 416 for
// a range past the end, or the whole document (200) for several ranges, another unit, a
// malformed header, or an If-Range that no longer matches. The range is read only while the
// blob still has the ETag its size came from.
func (a *API) documentRange(w http.ResponseWriter, r *http.Request, src blobstore.Path) error {
	props, err := a.Blobs.Properties(r.Context(), src.Container, src.Name)
	if err != nil {
		return documentErr(err)
	}
	rg, ok, unsatisfiable := parseRange(r.Header.Get("Range"), props.Size)
	if ifRange := r.Header.Get("If-Range"); ifRange != "" && strings.Trim(ifRange, `"`) != strings.Trim(props.ETag, `"`) {
		ok, unsatisfiable = false, false
	}
	switch {
	case unsatisfiable:
		w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(props.Size, 10))
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
		_, _ = io.WriteString(w, `{"type":"about:blank","title":"Range Not Satisfiable","status":416,"code":"range_not_satisfiable"}`+"\n")
		return nil
	case !ok:
		rg = byteRange{start: 0, length: props.Size}
	}
	body, err := a.Blobs.OpenRange(r.Context(), src.Container, src.Name, rg.start, rg.length, props.ETag)
	if err != nil {
		return documentErr(err)
	}
	defer body.Close()
	setBlobHeaders(w, props)
	status := http.StatusOK
	if ok {
		status = http.StatusPartialContent
		w.Header().Set("Content-Length", strconv.FormatInt(rg.length, 10))
		w.Header().Set("Content-Range", "bytes "+strconv.FormatInt(rg.start, 10)+"-"+
			strconv.FormatInt(rg.start+rg.length-1, 10)+"/"+strconv.FormatInt(props.Size, 10))
	}
	w.WriteHeader(status)
	if _, err := io.Copy(w, body); err != nil {
		logging.From(r.Context()).Warn().Err(err).Str("route", r.Pattern).Msg("document stream broken")
	}
	return nil
}

func documentErr(err error) error {
	if apperr.KindOf(err) == apperr.KindNotFound {
		return apperr.New(apperr.KindGone, "document_missing", "the document of this signing session is no longer available")
	}
	return err
}

func setDocumentHeaders(w http.ResponseWriter, documentID string) {
	h := w.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Disposition", `inline; filename="`+SafeFilename(documentID)+`"`)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer") // the URL holds the token
	h.Set("Accept-Ranges", "bytes")
}

func setBlobHeaders(w http.ResponseWriter, p blobstore.Props) {
	w.Header().Set("Content-Length", strconv.FormatInt(p.Size, 10))
	if p.ETag != "" {
		etag := p.ETag
		if !strings.HasPrefix(etag, `"`) {
			etag = `"` + etag + `"`
		}
		w.Header().Set("ETag", etag)
	}
}

// SafeFilename makes a Content-Disposition file name from a document id: letters, digits,
// '.', '-' and '_' kept, anything else replaced by '_', at most 100 characters, ending in
// ".pdf"; "document.pdf" when nothing usable is left.
func SafeFilename(documentID string) string {
	var b strings.Builder
	for _, r := range documentID {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 96 {
			break
		}
	}
	name := strings.Trim(b.String(), "._")
	if name == "" {
		name = "document"
	}
	if !strings.HasSuffix(strings.ToLower(name), ".pdf") {
		name += ".pdf"
	}
	return name
}
