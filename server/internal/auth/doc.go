// Package auth authenticates the server's requests and authorizes their
// operations as the Table service does (docs/protocol.md §8): Shared Key and
// Shared Key Lite signatures and the request's date, service and account
// shared access signatures with what they grant, and Microsoft Entra ID
// bearer tokens (claims checked, signature not).
//
// Authenticate takes a Request, which carries what the server knows of
// the request (account, key, clock, stored access policies), and returns
// a *Grant; the server asks Grant.Authorize before each operation. Errors
// are *localtable.Error values with the service's codes and statuses.
// The package is the server's: it keeps no state and routes nothing.
package auth
