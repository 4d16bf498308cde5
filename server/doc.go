// Package server is the Azure Table service's REST protocol over a
// localtable.Account: an http.Handler that the official Azure SDKs (Go
// aztables, JS @azure/data-tables, .NET, Python) accept as their table
// endpoint, as they accept Azurite.
//
// There are only a few types in server: Server, Options and
// AccountConfig. New makes a Server that serves one account (by default
// the emulator account devstoreaccount1 with its well-known key) at
// path-style URLs, http://host:port/{account}/…:
//
//	acct, _ := localtable.Open(nil)
//	srv := server.New(acct, nil)
//	http.ListenAndServe("127.0.0.1:10002", srv)
//
// The Server is a thin adapter: validation, limits, filters and
// transactions are the core's, the $batch wire format is package batch's,
// and every core *localtable.Error travels as
// the service's status, x-ms-error-code header and odata.error body.
// Requests are authenticated with SharedKey, SharedKeyLite, a service SAS
// (with stored access policies and PartitionKey/RowKey ranges) or an
// account SAS, unless Options.DisableAuth is set. Bearer tokens are
// accepted without verification when Options.AcceptBearerTokens is set
// (the command sets it when it serves HTTPS) and the request arrived over
// TLS, since token credentials only work over HTTPS and nothing here can
// verify an Entra ID token; a bearer token over plain HTTP is 403
// AuthenticationFailed.
//
// The readiness endpoint is /-/health: "-" can never be an account name.
//
// A Server is safe for concurrent use.
package server
