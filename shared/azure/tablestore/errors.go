package tablestore

import (
	"errors"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
)

// Codes of the domain errors the store returns.
const (
	CodeEntityNotFound = "entity_not_found"      // KindNotFound: no such row
	CodeEntityExists   = "entity_exists"         // KindConflict: Insert found a row
	CodePrecondition   = apperr.CodePrecondition // KindPrecondition: the ETag no longer matches
	CodeTableNotFound  = "table_not_found"       // KindNotFound: the table does not exist
)

// classify maps a service error code and status to a domain error, or nil when it is none of
// the promised ones.
func classify(cause error, code string, status int, table string) *apperr.Error {
	switch aztables.TableErrorCode(code) {
	case aztables.EntityAlreadyExists:
		return apperr.Wrap(cause, apperr.KindConflict, CodeEntityExists, "the entity already exists")
	case aztables.UpdateConditionNotSatisfied:
		return apperr.Wrap(cause, apperr.KindPrecondition, CodePrecondition, "the entity changed")
	case aztables.TableNotFound:
		return apperr.Wrap(cause, apperr.KindNotFound, CodeTableNotFound, "table %s does not exist", table)
	case aztables.EntityNotFound, aztables.ResourceNotFound:
		return apperr.Wrap(cause, apperr.KindNotFound, CodeEntityNotFound, "the entity was not found")
	case aztables.EntityTooLarge, aztables.PropertyValueTooLarge:
		return apperr.Wrap(cause, apperr.KindTooLarge, CodeEntityTooLarge, "the entity is too large")
	}
	switch status {
	case http.StatusNotFound:
		return apperr.Wrap(cause, apperr.KindNotFound, CodeEntityNotFound, "the entity was not found")
	case http.StatusPreconditionFailed:
		return apperr.Wrap(cause, apperr.KindPrecondition, CodePrecondition, "the entity changed")
	case http.StatusConflict:
		return apperr.Wrap(cause, apperr.KindConflict, CodeEntityExists, "the entity already exists")
	case http.StatusRequestEntityTooLarge:
		return apperr.Wrap(cause, apperr.KindTooLarge, CodeEntityTooLarge, "the entity is too large")
	}
	return nil
}

// translate turns an SDK error from a single-entity call into a domain error.
func translate(err error, op, table string) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		if e := classify(err, re.ErrorCode, re.StatusCode, table); e != nil {
			return e
		}
	}
	return apperr.Wrap(err, apperr.KindInternal, azconn.CodeStorageError, "table %s: %s", table, op)
}
