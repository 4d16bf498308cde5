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
// the entity JSON format package entityjson's; authentication and SAS
// authorization (server/internal/auth) and the CORS rules
// (server/internal/cors) are packages of their own, which the routing
// calls. What server holds is the routing and the handlers, and every
// core *localtable.Error travels as the status the service answers its
// code with (HTTPStatus: errors carry codes, the server alone knows
// HTTP), the x-ms-error-code header and an error body: odata.error
// JSON for the JSON operations, the OData XML error for the XML ones (table
// ACLs, service properties and statistics).
//
// Every x-ms-version of the storage services is accepted, from 2009-04-14
// to LatestVersion (see SupportedVersions), and echoed; where the service's
// answers differ by version the server follows the version asked for
// (JSON from 2013-08-15, x-ms-error-code from 2017-07-29, the
// x-ms-client-request-id echo from 2019-02-02). An unknown version is 400
// InvalidHeaderValue.
//
// Each account also has a read-only secondary endpoint over the same data,
// http://host:port/{account}-secondary/… (SecondarySuffix), as a
// read-access geo-redundant account has: reads work there, every write is
// 403 InsufficientAccountPermissions, and Get Table Service Stats is
// answered there only.
//
// Requests are authenticated as the service authenticates them, unless
// Options.DisableAuth is set:
//
//   - SharedKey and SharedKeyLite: the signature, and the request's date
//     (x-ms-date, else Date), which must be within 15 minutes of the
//     server's clock (Options.Clock) either way; a stale, missing or
//     unparsable date is 403 AuthenticationFailed.
//   - A service SAS (tn) or an account SAS (ss, srt): the signature, the
//     validity window (st, se, or a stored access policy named by si,
//     which must exist), the source IP (sip) and the protocol (spr=https
//     is 403 AuthorizationProtocolMismatch over HTTP, so tests of SASes
//     that aztables signs with spr=https use an HTTPS server). A repeated
//     SAS parameter is 403 AuthorizationFailure. Permissions follow the
//     service's tables: a service SAS reaches the entities of its table
//     (and its key range) with r, a, u and d, insert-or-replace and
//     insert-or-merge needing both a and u; an account SAS needs the
//     signed resource type of each operation (s: service properties and
//     stats, r or w; c: Query Tables l, Create Table c or w, Delete Table
//     d; o: entities, as a service SAS). No SAS reads or sets a table's
//     ACL (403 AuthorizationFailure). A batch is authorized operation by
//     operation.
//   - Bearer tokens (Microsoft Entra ID, what azidentity credentials
//     send), when Options.AcceptBearerTokens is set (the command sets it
//     with --oauth basic, which needs HTTPS) and the request arrived over
//     TLS: the token
//     must be a well-formed JWT whose aud is Azure Storage
//     (https://storage.azure.com) or the account's table endpoint, whose
//     iss is a Microsoft Entra ID issuer (https://sts.windows.net/{tenant}/,
//     https://login.microsoftonline.com/{tenant}/v2.0, or a national
//     cloud's), and whose nbf and exp cover the server's clock, with 5
//     minutes of skew. Nothing can verify its signature, so that is not
//     checked. A bad token is 403 AuthenticationFailed, or from
//     x-ms-version 2020-12-06 401 InvalidAuthenticationInfo with a
//     WWW-Authenticate bearer challenge (and an anonymous request then
//     gets 401 NoAuthenticationInformation); the message names the claim
//     that failed. A valid token may perform every operation (roles are not
//     emulated). A bearer token over plain HTTP is 403
//     AuthenticationFailed.
//
// The CORS rules set with Set Table Service Properties take effect as in
// the service: an OPTIONS request is an anonymous preflight, and the
// responses to an origin that a rule allows carry the Access-Control
// headers, so that a page in a browser can call the server. The service
// properties are stored in the account (localtable.Account.ServiceProperties),
// so they persist with its data and are shared by servers over a shared
// engine; a server reads the CORS rules again when those it uses are a
// second old.
//
// Query pages end as the service's may: after 1,000 items, after a scan
// budget (Options.QueryScanLimit, the service's five seconds of work),
// and, when a test asks, after Options.MaxPageSize items, at partition
// boundaries (Options.PageAtPartitionBoundary) or at once for the first
// page (Options.EmptyFirstPage), so that callers' paging loops are
// proven. A continuation with NextPartitionKey and no NextRowKey resumes
// at the start of that partition. Server.WriteError lets a harness in
// front of the server answer with the server's own errors.
//
// The readiness endpoint is /-/health: "-" can never be an account name.
//
// Two localtable extensions, outside the Azure API: an account opened with
// localtable.Options.Feed serves its change feed at GET
// /{account}/$changes, streamed as newline-delimited JSON (changes.go;
// ChangesContentType, RevisionHeader, OldestRevisionHeader); and a server
// given Options.TestControls serves test controls at
// /{account}/$test?comp=…, authorized with the account key
// (testcontrols.go; the command's serve --test-controls).
//
// A Server is safe for concurrent use.
package server
