package localtable

import (
	"errors"
	"fmt"
)

// ErrorCode is an Azure Table service error code, such as
// "EntityAlreadyExists". It is what the service (and localtable's HTTP
// server) puts in the x-ms-error-code header.
type ErrorCode string

// The service's error codes that localtable's operations produce. The
// codes of the protocol alone (authentication, content negotiation,
// methods) are the HTTP server's and have no constant here; the HTTP
// status the service answers each code with is the server's business too:
// see server.HTTPStatus.
const (
	CodeCommandsInBatchActOnDifferentPartitions ErrorCode = "CommandsInBatchActOnDifferentPartitions"
	CodeDuplicatePropertiesSpecified            ErrorCode = "DuplicatePropertiesSpecified"
	CodeEntityAlreadyExists                     ErrorCode = "EntityAlreadyExists"
	CodeEntityTooLarge                          ErrorCode = "EntityTooLarge"
	CodeInvalidDuplicateRow                     ErrorCode = "InvalidDuplicateRow"
	CodeInvalidInput                            ErrorCode = "InvalidInput"
	CodeInvalidResourceName                     ErrorCode = "InvalidResourceName"
	CodeInvalidValueType                        ErrorCode = "InvalidValueType"
	CodeKeyValueTooLarge                        ErrorCode = "KeyValueTooLarge"
	CodeOutOfRangeInput                         ErrorCode = "OutOfRangeInput"
	CodePropertiesNeedValue                     ErrorCode = "PropertiesNeedValue"
	CodePropertyNameInvalid                     ErrorCode = "PropertyNameInvalid"
	CodePropertyNameTooLong                     ErrorCode = "PropertyNameTooLong"
	CodePropertyValueTooLarge                   ErrorCode = "PropertyValueTooLarge"
	CodeRequestBodyTooLarge                     ErrorCode = "RequestBodyTooLarge"
	CodeResourceNotFound                        ErrorCode = "ResourceNotFound"
	CodeServerBusy                              ErrorCode = "ServerBusy"
	CodeTableAlreadyExists                      ErrorCode = "TableAlreadyExists"
	CodeTableNotFound                           ErrorCode = "TableNotFound"
	CodeTooManyProperties                       ErrorCode = "TooManyProperties"
	CodeUpdateConditionNotSatisfied             ErrorCode = "UpdateConditionNotSatisfied"
	CodeInternalError                           ErrorCode = "InternalError"
)

// CodeIndexNotFound is localtable's own code (the service has no
// indexes) of ErrIndexNotFound: a table's declared index that does not
// exist. The HTTP server answers it 404, with its message, on its index
// operations (a localtable extension).
const CodeIndexNotFound ErrorCode = "IndexNotFound"

// Error is the error type of every failed localtable operation that the
// service would also reject. Code is the service's error code, what it
// answers on the wire; Message says what was wrong and where. The HTTP
// status that goes with a code is not here: mapping codes to statuses is
// the HTTP server's business (server.HTTPStatus), and an embedded store
// has no HTTP.
//
// Use errors.Is with the sentinels below (errors.Is(err, ErrEntityExists))
// or errors.As to reach the code. A sentinel matches errors of its own
// meaning: ErrTableNotFound matches both the TableNotFound of an entity
// operation and the ResourceNotFound of deleting a missing table.
//
// Packages that build on localtable (a server, a fault-injecting layer, a
// store wrapping an Account) make their own errors as composite literals,
// &Error{Code: CodeInvalidInput, Message: "…"}. Such an Error matches, by
// its code, the sentinel of that code: errors.Is(err, ErrInvalidInput)
// holds for the one above. ErrClockOutOfRange, whose code InternalError
// says less than it does, is matched only by the errors localtable makes
// from it.
type Error struct {
	Code    ErrorCode // the service's error code
	Message string    // what was wrong, and where

	// kind is the sentinel an error localtable made stands for; nil for
	// a sentinel and for an Error made as a literal, which stand for the
	// sentinel of their code.
	kind *Error
	// byCode marks a sentinel that every literal Error of its code
	// matches.
	byCode bool
}

// Error returns "localtable: <Code>: <Message>".
func (e *Error) Error() string {
	return "localtable: " + string(e.Code) + ": " + e.Message
}

// Is reports whether target is e or the sentinel e stands for: for an
// error localtable returned, the sentinel of its meaning; for an Error
// made as a literal, the sentinel of its Code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	switch {
	case !ok || t == nil:
		return false
	case t == e:
		return true
	case e.kind != nil:
		return t == e.kind
	}
	return t.byCode && t.Code == e.Code
}

// sentinel returns a sentinel of code that literal Errors of the code
// match.
func sentinel(code ErrorCode, msg string) *Error {
	return &Error{Code: code, Message: msg, byCode: true}
}

// Sentinel errors, for errors.Is. Each carries the service's code and its
// standard message.
var (
	ErrTableNotFound         = sentinel(CodeTableNotFound, "The table specified does not exist.")
	ErrTableExists           = sentinel(CodeTableAlreadyExists, "The table specified already exists.")
	ErrEntityNotFound        = sentinel(CodeResourceNotFound, "The specified resource does not exist.")
	ErrEntityExists          = sentinel(CodeEntityAlreadyExists, "The specified entity already exists.")
	ErrConditionNotMet       = sentinel(CodeUpdateConditionNotSatisfied, "The update condition specified in the request was not satisfied.")
	ErrInvalidInput          = sentinel(CodeInvalidInput, "One of the request inputs is not valid.")
	ErrOutOfRangeInput       = sentinel(CodeOutOfRangeInput, "One of the request inputs is out of range.")
	ErrInvalidTableName      = sentinel(CodeInvalidResourceName, "The specifed resource name contains invalid characters.")
	ErrPropertiesNeedValue   = sentinel(CodePropertiesNeedValue, "The values are not specified for all properties in the entity.")
	ErrPropertyNameInvalid   = sentinel(CodePropertyNameInvalid, "The property name is invalid.")
	ErrPropertyNameTooLong   = sentinel(CodePropertyNameTooLong, "The property name exceeds the maximum allowed length (255).")
	ErrPropertyValueTooLarge = sentinel(CodePropertyValueTooLarge, "The property value exceeds the maximum allowed size (64KB).")
	ErrTooManyProperties     = sentinel(CodeTooManyProperties, "The entity contains more properties than allowed.")
	ErrEntityTooLarge        = sentinel(CodeEntityTooLarge, "The entity is larger than the maximum allowed size (1MB).")
	ErrDuplicateProperties   = sentinel(CodeDuplicatePropertiesSpecified, "A property is specified more than one time.")
	ErrDuplicateRow          = sentinel(CodeInvalidDuplicateRow, "The batch request contains multiple changes with same row key.")
	ErrDifferentPartitions   = sentinel(CodeCommandsInBatchActOnDifferentPartitions, "All commands in a batch must operate on same entity group.")
	ErrInvalidValueType      = sentinel(CodeInvalidValueType, "The value specified is invalid.")
	ErrRequestBodyTooLarge   = sentinel(CodeRequestBodyTooLarge, "The request body is too large and exceeds the maximum permissible limit.")
)

// ErrServerBusy is the error of a write on a shared engine
// (storage.VersionedEngine) that lost the race for its entities, or its
// table, to writers in other processes again and again: nothing of it was
// applied, and the caller may retry. The service answers ServerBusy, 503,
// when a partition is too busy to serve.
var ErrServerBusy = sentinel(CodeServerBusy, "The server is currently unable to receive requests. Please retry your request.")

// ErrClockOutOfRange is the error of a write when the account's clock
// (Options.Clock) is outside the range of Timestamps, 1601-01-01 to
// 9999-12-31T23:59:59.9999999Z, and of Open on such a clock. It is also
// the error of every write after one stamped with the last Timestamp of the
// range: Timestamps strictly increase and ETags never repeat, so the
// account can stamp nothing more (it can still be read and deleted from).
// It is a fault of the server, not of the request: code InternalError.
// An InternalError made elsewhere does not match it.
var ErrClockOutOfRange = &Error{Code: CodeInternalError, Message: "The server's clock is outside the range of entity Timestamps."}

// ErrClosed is returned by operations on a closed Account.
var ErrClosed = errors.New("localtable: account closed")

// ErrReadOnly is returned by every write, DDL and Restore of an Account
// opened with Options.ReadOnly.
var ErrReadOnly = errors.New("localtable: the account is read-only")

// ErrEngineInUse is returned by Open when Options.Engine belongs to an
// Account that is open. An engine holds one account: two Accounts over it
// would both number their tables from 1, mixing their entities and
// defeating each other's ETags.
var ErrEngineInUse = errors.New("localtable: the engine belongs to another open Account")

// newError returns an Error of the sentinel's kind with a detailed message.
func newError(s *Error, format string, args ...any) *Error {
	return &Error{Code: s.Code, Message: fmt.Sprintf(format, args...), kind: s}
}

// withCode returns an Error of the sentinel's meaning that travels on the
// wire with a different code.
func withCode(s *Error, code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), kind: s}
}

// ErrorCodeOf returns the service error code of err, or "" if err carries
// none.
func ErrorCodeOf(err error) ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// TransactionError is returned when an action of an entity group
// transaction fails; nothing of the transaction was applied. Index is the
// 0-based position of the failing action, and Err its own error. errors.Is
// and errors.As see through it to Err.
type TransactionError struct {
	Index int
	Err   *Error
}

// Error returns "localtable: transaction action <Index>: <Err>".
func (e *TransactionError) Error() string {
	return fmt.Sprintf("localtable: transaction action %d: %s: %s", e.Index, e.Err.Code, e.Err.Message)
}

// Unwrap returns Err.
func (e *TransactionError) Unwrap() error { return e.Err }

// messageOf returns an error's message without its code and prefix: an
// *Error's Message, another error's text. An error about a part of the
// input quotes the part's own error with it, under its own code, rather
// than nest one code inside another.
func messageOf(err error) string {
	if e := (*Error)(nil); errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}
