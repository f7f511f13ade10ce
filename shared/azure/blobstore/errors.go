package blobstore

import (
	"errors"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
)

// Codes of the domain errors the store returns.
const (
	CodeBlobNotFound = "blob_not_found"        // KindNotFound: the blob or its container is missing
	CodeBlobExists   = "blob_exists"           // KindConflict: PutIfAbsent found a blob
	CodePrecondition = apperr.CodePrecondition // KindPrecondition: an ETag condition failed
)

// translate turns SDK errors into domain errors; anything else is wrapped as it is (internal).
func translate(err error, op, container, name string) error {
	if err == nil {
		return nil
	}
	switch {
	case bloberror.HasCode(err, bloberror.BlobNotFound, bloberror.ContainerNotFound, bloberror.ResourceNotFound):
		return apperr.Wrap(err, apperr.KindNotFound, CodeBlobNotFound, "blob %s/%s was not found", container, name)
	case bloberror.HasCode(err, bloberror.BlobAlreadyExists):
		return apperr.Wrap(err, apperr.KindConflict, CodeBlobExists, "blob %s/%s already exists", container, name)
	case bloberror.HasCode(err, bloberror.ConditionNotMet, bloberror.TargetConditionNotMet, bloberror.SourceConditionNotMet):
		return apperr.Wrap(err, apperr.KindPrecondition, CodePrecondition, "blob %s/%s changed", container, name)
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		switch re.StatusCode {
		case http.StatusNotFound:
			return apperr.Wrap(err, apperr.KindNotFound, CodeBlobNotFound, "blob %s/%s was not found", container, name)
		case http.StatusPreconditionFailed:
			return apperr.Wrap(err, apperr.KindPrecondition, CodePrecondition, "blob %s/%s changed", container, name)
		}
	}
	return apperr.Wrap(err, apperr.KindInternal, azconn.CodeStorageError, "blob %s %s/%s", op, container, name)
}
