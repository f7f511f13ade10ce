package pdfdoc

// Problem codes about a PDF that both apps and the PDF packages answer with.
const (
	// CodeUnreadable: the bytes are not a PDF this service can read (400, field named).
	CodeUnreadable = "pdf_unreadable"
	// CodeNotFound: no PDF at the blob path given (400 at create; a delivery upload records it).
	CodeNotFound = "pdf_not_found"
)

// CodeTooComplex: decoding the PDF's structure would cost more than the parse budget (see
// Limits); 400, field named.
const CodeTooComplex = "pdf_too_complex"
