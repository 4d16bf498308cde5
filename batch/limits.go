package batch

import (
	"net/http"
	"strconv"
)

// The service's limits on a batch.
const (
	// MaxOperations is the most operations a changeset may hold.
	MaxOperations = 100
	// MaxBodySize is the largest request body, in bytes: 4 MiB.
	MaxBodySize = 4 << 20
)

// maxParts bounds the parts read at the top level of a body, where the
// service's rules allow one changeset and count the others.
const maxParts = 1000

// This file holds the batch rules the wire format can check, in one
// place: ParseRequest and EncodeRequest both apply them. The rules that
// need the entities (one partition, each entity once, the table exists)
// are localtable.Table.Transact's; the methods a changeset may use and
// what they mean are the server's.

// checkBodySize enforces MaxBodySize on a body of n bytes.
func checkBodySize(n int) error {
	if n > MaxBodySize {
		return &Error{Code: CodeRequestBodyTooLarge, Status: http.StatusRequestEntityTooLarge, Index: -1,
			Message: "The request body is too large and exceeds the maximum permissible limit of " + strconv.Itoa(MaxBodySize) + " bytes."}
	}
	return nil
}

// checkShape enforces the rules on a request's shape: a changeset of 1
// to MaxOperations operations, none of them a GET; or one GET alone,
// outside a changeset, with no changeset after it.
func (r *Request) checkShape() error {
	if len(r.Operations) == 0 {
		if r.Changeset {
			return errMalformed("a changeset holds no operation")
		}
		return errMalformed("it holds no operation")
	}
	if !r.Changeset {
		switch {
		case len(r.Operations) > 1 || r.ExtraChangesets > 0:
			return errMalformed("a query can only be alone in a batch, outside a changeset")
		case r.Operations[0].Method != http.MethodGet:
			return errMalformed("a write must be inside a changeset")
		}
		return nil
	}
	if len(r.Operations) > MaxOperations {
		// The service answers at the index of the 100th operation.
		return &Error{Code: CodeInvalidInput, Status: http.StatusBadRequest, Index: MaxOperations - 1,
			Message: "The batch request operation exceeds the maximum " + strconv.Itoa(MaxOperations) + " changes per change set."}
	}
	for i := range r.Operations {
		if r.Operations[i].Method == http.MethodGet {
			return &Error{Code: CodeInvalidInput, Status: http.StatusBadRequest, Index: i, Operation: &r.Operations[i],
				Message: "A query can only be alone in a batch, outside a changeset."}
		}
	}
	return nil
}
