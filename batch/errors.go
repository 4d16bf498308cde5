package batch

import (
	"net/http"
	"strconv"
	"strings"
)

// The service's error codes for the batch rules.
const (
	CodeInvalidInput          = "InvalidInput"
	CodeMissingRequiredHeader = "MissingRequiredHeader"
	CodeInvalidHeaderValue    = "InvalidHeaderValue"
	CodeRequestBodyTooLarge   = "RequestBodyTooLarge"
)

// Error is a batch request the service refuses: the error code, HTTP
// status and message it answers with.
//
// An error with Index -1 fails the request as a whole: the service
// answers it with Status and an error body instead of 202 Accepted. An
// error with Index >= 0 fails the changeset: the service answers 202
// with a changeset response holding one response, of Status, whose
// error message is prefixed with the index and a colon ("99:…").
type Error struct {
	Code    string // the service's error code, one of the Code constants
	Status  int    // the HTTP status
	Message string // the service's message, without the "N:" prefix

	// Index is the 0-based index in the changeset at which the error is
	// reported, or -1 for an error of the request as a whole.
	Index int

	// Operation is the operation at fault, if one is: its response
	// carries the operation's Content-ID. It is nil for an error of the
	// request or of the changeset as a whole (too many operations).
	Operation *Operation
}

// Error returns the message, prefixed with the package name and, for an
// error of the changeset, the operation's index.
func (e *Error) Error() string {
	if e.Index >= 0 {
		return "batch: operation " + strconv.Itoa(e.Index) + ": " + e.Message
	}
	return "batch: " + e.Message
}

// ErrExtraChangeset is the answer to each changeset after the first in
// a batch: the service processes the first changeset and rejects the
// others with 400, each in its own changeset response.
var ErrExtraChangeset = &Error{Code: CodeInvalidInput, Status: http.StatusBadRequest, Index: -1,
	Message: "One of the request inputs is not valid. A batch holds one changeset: this one was not processed."}

// errMalformed is the error of a request body the service cannot read.
func errMalformed(msg string) *Error {
	return &Error{Code: CodeInvalidInput, Status: http.StatusBadRequest, Index: -1,
		Message: "The batch request body is malformed: " + msg}
}

// quote writes s as an OData string literal, for messages.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
