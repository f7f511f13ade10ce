package blobstore

import "github.com/esign-svc/esign/shared/blobpath"

// The request blob paths are blobpath's (pure, for domain packages); these names stay for the
// adapters and handlers that already use them.
type Path = blobpath.Path

// Path parsing, re-exported from blobpath.
const (
	CodeInvalidBlobPath = blobpath.CodeInvalidBlobPath
	MaxBlobNameLength   = blobpath.MaxBlobNameLength
)

// ParsePath, ParseFieldPath and ValidContainerName are blobpath's.
var (
	ParsePath          = blobpath.ParsePath
	ParseFieldPath     = blobpath.ParseFieldPath
	ValidContainerName = blobpath.ValidContainerName
)
