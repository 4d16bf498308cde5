package auth

import (
	"strings"

	"github.com/localtable/localtable"
)

// Error codes the core has no constant for.
const (
	codeNoAuthenticationInfo    localtable.ErrorCode = "NoAuthenticationInformation"
	codeInvalidAuthenticationIn localtable.ErrorCode = "InvalidAuthenticationInfo"
)

// newError returns an *localtable.Error with any code; the server
// answers it with the code's status (server.HTTPStatus).
func newError(code localtable.ErrorCode, msg string) *localtable.Error {
	return &localtable.Error{Code: code, Message: msg}
}

// quoteOData writes s as an OData string literal, as messages quote
// values.
func quoteOData(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
