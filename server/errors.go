package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/storage"
)

// Error codes of the protocol, which the core does not produce.
const (
	codeAuthenticationFailed   localtable.ErrorCode = "AuthenticationFailed"
	codeJSONFormatNotSupported localtable.ErrorCode = "JsonFormatNotSupported"
	codeMethodNotAllowed       localtable.ErrorCode = "MethodNotAllowed"
	codeInvalidURI             localtable.ErrorCode = "InvalidUri"
	codeInvalidHeaderValue     localtable.ErrorCode = "InvalidHeaderValue"
	codeInvalidXMLDocument     localtable.ErrorCode = "InvalidXmlDocument"
	codeAtomFormatNotSupported localtable.ErrorCode = "AtomFormatNotSupported"
	codeInvalidQueryParameter  localtable.ErrorCode = "InvalidQueryParameterValue"
	codeXMethodIncorrectValue  localtable.ErrorCode = "XMethodIncorrectValue"
	codeXMethodNotUsingPost    localtable.ErrorCode = "XMethodNotUsingPost"
	codeServerBusy             localtable.ErrorCode = "ServerBusy"
	codeOperationTimedOut      localtable.ErrorCode = "OperationTimedOut"
	codeUnsupportedHTTPVerb    localtable.ErrorCode = "UnsupportedHttpVerb"
	codeResourceTypeMismatch   localtable.ErrorCode = "ResourceTypeMismatch"
	codeMissingRequiredHeader  localtable.ErrorCode = "MissingRequiredHeader"
	codeXMethodIncorrectCount  localtable.ErrorCode = "XMethodIncorrectCount"
	codeTableBeingDeleted      localtable.ErrorCode = "TableBeingDeleted"
)

// More codes of the protocol: a JSON operation's body of a media type other
// than application/json (see checkJSONBody), and a request refused although
// its credentials are valid, or not checked (see checkBrowserOrigin).
const (
	codeMediaTypeNotSupported localtable.ErrorCode = "MediaTypeNotSupported"
	codeAuthorizationFailure  localtable.ErrorCode = "AuthorizationFailure"
)

// wireError returns an *localtable.Error with any code, for the
// protocol's own failures. Its status is the code's (HTTPStatus).
func wireError(code localtable.ErrorCode, msg string) *localtable.Error {
	return &localtable.Error{Code: code, Message: msg}
}

func errInternal(msg string) *localtable.Error {
	return wireError(localtable.CodeInternalError, msg)
}

func errInvalidInput(msg string) *localtable.Error {
	return wireError(localtable.CodeInvalidInput, msg)
}

func errInvalidURI(msg string) *localtable.Error {
	return wireError(codeInvalidURI, msg)
}

func errMethod(r *http.Request) *localtable.Error {
	return wireError(codeMethodNotAllowed, "The requested method "+r.Method+" is not allowed on this resource.")
}

// asWireError maps any error to the code and message the server answers
// with; HTTPStatus gives its status.
func asWireError(err error) *localtable.Error {
	var le *localtable.Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &le):
		return le
	case errors.As(err, &mbe):
		return wireError(localtable.CodeRequestBodyTooLarge,
			"The request body is too large and exceeds the maximum permissible limit of "+strconv.FormatInt(mbe.Limit, 10)+" bytes.")
	case errors.Is(err, localtable.ErrClosed):
		return wireError(codeServerBusy, "The server is shutting down.")
	case errors.Is(err, storage.ErrUnavailable):
		// The engine's store could not be reached; nothing was applied.
		return wireError(codeServerBusy, "The server is currently unable to receive requests. Please retry your request.")
	case errors.Is(err, storage.ErrCommitUnknown):
		// A write that may or may not have applied.
		return wireError(codeOperationTimedOut, "The operation could not be completed within the permitted time.")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return wireError(codeOperationTimedOut, "The operation could not be completed within the permitted time.")
	}
	return errInternal("The server encountered an internal error: " + err.Error())
}

// fail answers err as the service does: its status, the x-ms-error-code
// header (for versions from 2017-07-29) and a body in the operation's
// error format (see errorformat.go): odata.error JSON, OData XML, or the
// storage services' XML.
func (rc *reqCtx) fail(err error) {
	e := asWireError(err)
	status := HTTPStatus(e.Code)
	if status >= 500 {
		rc.s.log.Error("localtable server: request failed", "method", rc.r.Method, "url", rc.r.URL.String(), "err", err)
	}
	rc.writeError(status, e, err)
}

// writeError writes e (the wire form of err) with status, without logging
// it.
func (rc *reqCtx) writeError(status int, e *localtable.Error, err error) {
	h := rc.w.Header()
	if rc.version >= versionErrorCodeSince {
		h.Set("X-Ms-Error-Code", string(e.Code))
	}
	h.Del("ETag")
	var body []byte
	switch f := rc.errorFormat(err); f {
	case formatJSON:
		h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
		body = errorBody(e, rc.errPrefix, rc.id, rc.start)
	case formatODataXML:
		h.Set("Content-Type", "application/xml")
		body = odataXMLErrorBody(e, rc.id, rc.start)
	default:
		var de *detailedError
		errors.As(err, &de)
		h.Set("Content-Type", "application/xml")
		body = storageXMLErrorBody(e, de.details, rc.id, rc.start)
	}
	rc.writeHeader(status)
	rc.w.Write(body)
}

// fixedMessages are the service's exact messages for codes whose text
// carries no detail. Clients match on them (after the batch "N:" index
// prefix), so the core's more detailed messages give way to them on the
// wire.
var fixedMessages = map[localtable.ErrorCode]string{
	localtable.CodeEntityAlreadyExists:         "The specified entity already exists.",
	localtable.CodeResourceNotFound:            "The specified resource does not exist.",
	localtable.CodeTableNotFound:               "The table specified does not exist.",
	localtable.CodeTableAlreadyExists:          "The table specified already exists.",
	localtable.CodeUpdateConditionNotSatisfied: "The update condition specified in the request was not satisfied.",
	// Batch-only codes.
	localtable.CodeCommandsInBatchActOnDifferentPartitions: "All commands in a batch must operate on same entity group.",
	localtable.CodeInvalidDuplicateRow:                     "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request.",
}

// errorBody is the service's JSON error document.
func errorBody(e *localtable.Error, prefix, requestID string, now time.Time) []byte {
	msg := errorText(e, prefix, requestID, now)
	var b []byte
	b = append(b, `{"odata.error":{"code":`...)
	b = entityjson.AppendString(b, string(e.Code))
	b = append(b, `,"message":{"lang":"en-US","value":`...)
	b = entityjson.AppendString(b, msg)
	b = append(b, "}}}"...)
	return b
}
