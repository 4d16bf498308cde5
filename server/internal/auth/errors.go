package auth

import (
	"github.com/localtable/localtable"
)

// Error codes of authentication and authorization, which the core does
// not produce.
const (
	codeAuthenticationFailed              localtable.ErrorCode = "AuthenticationFailed"
	codeAuthorizationPermissionMismatch   localtable.ErrorCode = "AuthorizationPermissionMismatch"
	codeAuthorizationResourceTypeMismatch localtable.ErrorCode = "AuthorizationResourceTypeMismatch"
	codeNoAuthenticationInfo              localtable.ErrorCode = "NoAuthenticationInformation"
	codeInvalidAuthenticationIn           localtable.ErrorCode = "InvalidAuthenticationInfo"
)

// newError returns an *localtable.Error with any code; the server
// answers it with the code's status (server.HTTPStatus).
func newError(code localtable.ErrorCode, msg string) *localtable.Error {
	return &localtable.Error{Code: code, Message: msg}
}
