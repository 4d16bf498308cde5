package server

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/localtable/localtable"
)

// This file shapes query pages as the service may, on request (Options
// MaxPageSize, EmptyFirstPage, PageAtPartitionBoundary), so that tests
// prove their callers' paging loops, and reads the partition-only
// continuation those pages carry.
//
// The service documents (Query Timeout and Pagination) that a page ends
// after 1,000 items, after five seconds of work, or where the query
// crosses a partition boundary; that a page may hold no results and still
// carry a continuation; and that x-ms-continuation-NextRowKey may be
// absent. A continuation here names a position in the entity order: the
// core's tokens resume after the last entity read, and a NextPartitionKey
// sent alone resumes at the start of that partition.

// pageSize is the core's page size for a $top (-1: absent), lowered to
// Options.MaxPageSize.
func (s *Server) pageSize(top int) int {
	n := pageTop(top)
	if m := s.opts.MaxPageSize; m > 0 && (n == 0 || n > m) {
		n = m
	}
	return n
}

// partitionToken is a NextPartitionKey naming the start of partition pk,
// in the shape of the service's tokens.
func partitionToken(pk string) string {
	b := base64.StdEncoding.EncodeToString([]byte(pk))
	return "1!" + strconv.Itoa(len(b)) + "!" + b
}

// parsePartitionToken reads a partitionToken.
func parsePartitionToken(tok string) (string, bool) {
	rest, ok := strings.CutPrefix(tok, "1!")
	if !ok {
		return "", false
	}
	n, b, ok := strings.Cut(rest, "!")
	if !ok || n != strconv.Itoa(len(b)) {
		return "", false
	}
	pk, err := base64.StdEncoding.DecodeString(b)
	return string(pk), err == nil
}

// resumeAt reads the request's continuation: the core's pair into
// opts.Continuation, or a NextPartitionKey sent alone as the start of its
// partition (ok true). A lone NextPartitionKey that does not decode goes
// to the core, which refuses it.
func (rc *reqCtx) resumeAt(opts *localtable.QueryOptions) (start localtable.Key, ok bool) {
	npk, nrk := rc.query.Get("NextPartitionKey"), rc.query.Get("NextRowKey")
	if npk != "" && nrk == "" {
		if pk, ok := parsePartitionToken(npk); ok {
			return localtable.PartitionStart(pk), true
		}
	}
	opts.Continuation = localtable.Continuation{NextPartitionKey: npk, NextRowKey: nrk}
	return localtable.Key{}, false
}

// nextPage is the continuation a page answers with: the two header
// values, either of which may be empty.
type nextPage struct{ pk, rk string }

// shapePage applies EmptyFirstPage and PageAtPartitionBoundary to a page
// of a query that began with no continuation (first) or resumed.
func (s *Server) shapePage(page *localtable.QueryPage, first bool) nextPage {
	next := nextPage{page.Continuation.NextPartitionKey, page.Continuation.NextRowKey}
	es := page.Entities
	switch {
	case len(es) == 0:
	case first && s.opts.EmptyFirstPage:
		// Nothing yet, and a continuation at the first result's partition.
		page.Entities = es[:0]
		return nextPage{pk: partitionToken(es[0].PartitionKey)}
	case s.opts.PageAtPartitionBoundary:
		for i := 1; i < len(es); i++ {
			if es[i].PartitionKey != es[0].PartitionKey {
				page.Entities = es[:i]
				return nextPage{pk: partitionToken(es[i].PartitionKey)}
			}
		}
	}
	return next
}
