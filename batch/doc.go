// Package batch reads and writes the wire format of the Azure Table
// service's entity group transactions: the OData $batch body, a
// multipart/mixed MIME body whose parts are HTTP requests, answered by a
// multipart/mixed body whose parts are HTTP responses. It knows the
// HTTP-in-MIME framing and the batch rules that need no entity; it
// knows nothing of tables or entities.
//
// There are only a few types: a Request holds Operations, a Reply holds
// Responses, and an Error is a rule the service enforces. A server calls
// ParseRequest (or ReadRequest) and EncodeResponse; a client calls
// EncodeRequest and ParseResponse. Each pair round-trips:
// ParseRequest(EncodeRequest(req)) is req, ParseResponse(EncodeResponse(rep))
// is rep.
//
// # The request
//
// POST /{account}/$batch with Content-Type multipart/mixed and a
// boundary. The body holds one changeset, itself multipart/mixed, whose
// parts are the operations, each an HTTP request with no Content-Length
// (lines end with CRLF; readers take LF too):
//
//	--batch_B
//	Content-Type: multipart/mixed; boundary=changeset_C
//
//	--changeset_C
//	Content-Transfer-Encoding: binary
//	Content-Type: application/http
//
//	POST http://127.0.0.1:10002/devstoreaccount1/t1 HTTP/1.1
//	Content-Type: application/json
//	Prefer: return-no-content
//
//	{"PartitionKey":"p","RowKey":"a"}
//	--changeset_C
//	Content-Transfer-Encoding: binary
//	Content-Type: application/http
//
//	DELETE http://127.0.0.1:10002/devstoreaccount1/t1(PartitionKey='p',RowKey='b') HTTP/1.1
//	If-Match: *
//
//
//	--changeset_C--
//
//	--batch_B--
//
// Or, instead of the changeset, one application/http part alone holding
// a GET: an entity's retrieval or a query. The line end before a
// delimiter belongs to the delimiter, so a body runs from the blank line
// after its headers to the character before that line end; a part with
// no body, like the DELETE, ends with two empty lines.
//
// # The response
//
// 202 Accepted with Content-Type multipart/mixed; boundary=batchresponse_…
// The body mirrors the request: a changeset response holding one response
// per operation, in order; or, if an operation failed, that operation's
// response alone, nothing having been applied; or the GET's response,
// alone. Each response ends with a line end before the next delimiter:
// two empty lines after the headers of a response with no body.
//
//	--batchresponse_X
//	Content-Type: multipart/mixed; boundary=changesetresponse_Y
//
//	--changesetresponse_Y
//	Content-Type: application/http
//	Content-Transfer-Encoding: binary
//
//	HTTP/1.1 204 No Content
//	X-Content-Type-Options: nosniff
//	Cache-Control: no-cache
//	DataServiceVersion: 1.0;
//
//
//	--changesetresponse_Y--
//	--batchresponse_X--
//
// The service spells and orders a response's headers in one of four
// ways, which NoContentHeader, ContentHeader, OperationErrorHeader and
// ChangesetErrorHeader reproduce; clients depend on it (the JS SDK reads
// "ETag: " case-sensitively, aztables needs the body to start with the
// delimiter).
//
// # The rules
//
// ParseRequest enforces, with the service's error codes: a body of at
// most MaxBodySize (413 RequestBodyTooLarge); a changeset of at most
// MaxOperations operations (400 InvalidInput, reported at the index of
// the 100th); a GET only alone, outside a changeset, and writes only
// inside one; one changeset processed, the others each answered
// ErrExtraChangeset. An Error's Index says whether a server answers it
// as the request's status or inside a 202 changeset response.
//
// The rules that need the entities stay with them, in
// localtable.Table.Transact: every operation on one table and one
// partition (CommandsInBatchActOnDifferentPartitions), each entity at
// most once (InvalidDuplicateRow). So do the methods a changeset may use
// and what each means, which are the server's.
//
// The functions are safe for concurrent use. Operations and responses
// that ParseRequest and ParseResponse return refer to the bytes parsed.
package batch
