package server

import (
	"net/http"

	"github.com/localtable/localtable"
)

// HTTPStatus returns the HTTP status the Table service answers an error
// code with: 404 for TableNotFound, 409 for EntityAlreadyExists, 412 for
// UpdateConditionNotSatisfied, and so on for every code of package
// localtable and every code the server answers with. A code it does not
// know is 500 Internal Server Error: an error the server cannot place is
// its own fault, not the client's.
//
// It is the mapping the server answers with; code that puts a
// *localtable.Error on the wire itself (a proxy, a fault-injecting layer)
// can use it to answer as the server would.
func HTTPStatus(code localtable.ErrorCode) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// statuses maps each error code to its status, as the service's error code
// tables document them (the Table service's codes, and the codes common
// to the storage services' REST APIs).
var statuses = map[localtable.ErrorCode]int{
	// Package localtable's codes.
	localtable.CodeCommandsInBatchActOnDifferentPartitions: http.StatusBadRequest,
	localtable.CodeDuplicatePropertiesSpecified:            http.StatusBadRequest,
	localtable.CodeEntityAlreadyExists:                     http.StatusConflict,
	localtable.CodeEntityTooLarge:                          http.StatusBadRequest,
	localtable.CodeInvalidDuplicateRow:                     http.StatusBadRequest,
	localtable.CodeInvalidInput:                            http.StatusBadRequest,
	localtable.CodeInvalidResourceName:                     http.StatusBadRequest,
	localtable.CodeInvalidValueType:                        http.StatusBadRequest,
	localtable.CodeKeyValueTooLarge:                        http.StatusBadRequest,
	localtable.CodeOutOfRangeInput:                         http.StatusBadRequest,
	localtable.CodePropertiesNeedValue:                     http.StatusBadRequest,
	localtable.CodePropertyNameInvalid:                     http.StatusBadRequest,
	localtable.CodePropertyNameTooLong:                     http.StatusBadRequest,
	localtable.CodePropertyValueTooLarge:                   http.StatusBadRequest,
	localtable.CodeRequestBodyTooLarge:                     http.StatusRequestEntityTooLarge,
	localtable.CodeResourceNotFound:                        http.StatusNotFound,
	localtable.CodeTableAlreadyExists:                      http.StatusConflict,
	localtable.CodeTableNotFound:                           http.StatusNotFound,
	localtable.CodeTooManyProperties:                       http.StatusBadRequest,
	localtable.CodeUpdateConditionNotSatisfied:             http.StatusPreconditionFailed,
	localtable.CodeInternalError:                           http.StatusInternalServerError,
	localtable.CodeIndexNotFound:                           http.StatusNotFound, // localtable's own, of its index extension

	// The Table service's codes the core does not produce.
	codeAuthenticationFailed:           http.StatusForbidden,
	codeJSONFormatNotSupported:         http.StatusUnsupportedMediaType,
	codeMethodNotAllowed:               http.StatusMethodNotAllowed,
	codeAtomFormatNotSupported:         http.StatusUnsupportedMediaType,
	codeMediaTypeNotSupported:          http.StatusUnsupportedMediaType,
	codeXMethodIncorrectCount:          http.StatusBadRequest,
	codeXMethodIncorrectValue:          http.StatusBadRequest,
	codeXMethodNotUsingPost:            http.StatusBadRequest,
	codeTableBeingDeleted:              http.StatusConflict,
	codeInvalidURI:                     http.StatusBadRequest,
	codeInvalidHeaderValue:             http.StatusBadRequest,
	codeInvalidXMLDocument:             http.StatusBadRequest,
	codeInvalidQueryParameter:          http.StatusBadRequest,
	codeMissingRequiredHeader:          http.StatusBadRequest,
	codeUnsupportedHTTPVerb:            http.StatusMethodNotAllowed,
	codeResourceTypeMismatch:           http.StatusConflict,
	codeServerBusy:                     http.StatusServiceUnavailable,
	codeOperationTimedOut:              http.StatusInternalServerError,
	codeInsufficientAccountPermissions: http.StatusForbidden,
	codeAccountNotFound:                http.StatusNotFound,

	// The codes of server/internal/auth.
	"AuthorizationPermissionMismatch":   http.StatusForbidden,
	"AuthorizationResourceTypeMismatch": http.StatusForbidden,
	"NoAuthenticationInformation":       http.StatusUnauthorized,
	"InvalidAuthenticationInfo":         http.StatusUnauthorized,
	"AuthorizationFailure":              http.StatusForbidden,
	"AuthorizationProtocolMismatch":     http.StatusForbidden,
	"AuthorizationServiceMismatch":      http.StatusForbidden,
	"AuthorizationSourceIPMismatch":     http.StatusForbidden,

	// The codes of server/internal/cors.
	"CorsPreflightFailure": http.StatusForbidden,
	"InvalidXmlNodeValue":  http.StatusBadRequest,

	// localtable's own codes, of its extensions (changes.go).
	codeFeedCompacted: http.StatusGone,
}
