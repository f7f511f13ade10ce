package delivery

import (
	"github.com/esign-svc/esign/shared/blobpath"
)

// The containers pdfBlobPath may name: uploaded and rendered documents, and the seal job's
// output (signed/<tenant>/<groupId>/signed.pdf and certificate.pdf), of the caller's tenant only.
const (
	ContainerDocuments = "documents"
	ContainerSigned    = "signed"
)

// ContainerCopies holds one copy of the document per delivery session that issued a download
// URL (CopyPath): the URLs point at the copy, and revoke deletes it, so a URL issued before the
// revoke stops working at once while the other deliveries of the document keep theirs.
const ContainerCopies = "deliveries"

// Source confines a parsed pdfBlobPath to tenant: a path in the signed container must lie under
// signed/<tenant>/ (another tenant's signed document is refused whether it exists or not, so the
// answer reveals nothing). Errors: 400 invalid_blob_path naming pdfBlobPath.
func Source(p blobpath.Path, tenant string) (blobpath.Path, error) {
	return blobpath.Tenant("pdfBlobPath", p, ContainerSigned, tenant)
}

// SourceOf parses and confines a stored session's document path as Create accepted it, so that
// the download and library-upload paths never read outside the session's tenant even if a row
// were written by hand. Errors: invalid_blob_path.
func SourceOf(s *Session) (blobpath.Path, error) {
	p, err := blobpath.ParseIn("pdfBlobPath", s.PDFBlobPath, ContainerDocuments, ContainerSigned)
	if err != nil {
		return blobpath.Path{}, err
	}
	return Source(p, s.TenantID)
}

// CopyPath is where the session's download copy lives, under its tenant's folder:
// deliveries/<tenant>/<deliveryId>.pdf (DESIGN 14).
func CopyPath(s *Session) blobpath.Path {
	return blobpath.Path{Container: ContainerCopies, Name: blobpath.TenantName(s.TenantID, s.DeliveryID, ".pdf")}
}

// CopyPaths are every place a session's copy may lie: CopyPath, and deliveries/<deliveryId>.pdf
// where copies were made before tenant folders, so that a revoke ends both.
func CopyPaths(s *Session) []blobpath.Path {
	return []blobpath.Path{CopyPath(s), {Container: ContainerCopies, Name: s.DeliveryID + ".pdf"}}
}
