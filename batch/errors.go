package batch

import "strings"

// Error codes of the batch rules, as the service spells them.
const (
	CodeInvalidInput          = "InvalidInput"
	CodeMissingRequiredHeader = "MissingRequiredHeader"
	CodeInvalidHeaderValue    = "InvalidHeaderValue"
)

// Error is a batch the service refuses: its error code, HTTP status and
// message.
type Error struct {
	Code    string
	Status  int
	Message string
}

// Error returns the message, prefixed with the package name.
func (e *Error) Error() string { return "batch: " + e.Message }

func errBatch(msg string) *Error {
	return &Error{Code: CodeInvalidInput, Status: 400, Message: "The batch request body is malformed: " + msg}
}

// quote writes s as an OData string literal, for messages.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
