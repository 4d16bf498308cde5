// Package batch reads and writes the OData $batch wire format of the
// Azure Table service's entity group transactions: multipart/mixed
// bodies whose parts are HTTP requests and responses.
package batch
