package portal

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/logging"
	"github.com/esign-svc/esign/shared/tokens"
)

// document is GET (and HEAD) /api/esign/document/{token}, {token} being the portal access
// token: it streams the session's PDF from blob storage to the signer's browser without
// buffering it (inline, no-store). A view-only (secondary) token may read it. The token is not
// refreshed here: the portal gets a fresh documentUrl with every session answer. Errors: 401
// for a bad or expired token; 410 once the session expired or was cancelled; 409 sealing or
// complete; 403 otp_required for a slot that must pass OTP first.
func (a *API) document(w http.ResponseWriter, r *http.Request) error {
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
