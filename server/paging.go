package server

import (
	"strconv"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/odata"
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

// resumeAt reads the request's continuation into opts: the service's
// NextPartitionKey and NextRowKey, or a NextPartitionKey alone, which the
// core resumes at the start of its partition (ContinuationAtPartition).
func (rc *reqCtx) resumeAt(opts *localtable.QueryOptions) {
	opts.Continuation = localtable.Continuation{NextPartitionKey: rc.query.Get("NextPartitionKey"), NextRowKey: rc.query.Get("NextRowKey")}
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
		return nextPage{pk: localtable.ContinuationAtPartition(es[0].PartitionKey).NextPartitionKey}
	case s.opts.PageAtPartitionBoundary:
		for i := 1; i < len(es); i++ {
			if es[i].PartitionKey != es[0].PartitionKey {
				page.Entities = es[:i]
				return nextPage{pk: localtable.ContinuationAtPartition(es[i].PartitionKey).NextPartitionKey}
			}
		}
	}
	return next
}

// parseTop reads $top: an integer from 0 to 1000, or -1 when absent. As
// the service answers, 1001 and above, negative values and non-integers
// are 400 InvalidInput, and 0 is a valid request for no items (the
// callers answer it with an empty page).
func (rc *reqCtx) parseTop() (int, error) {
	s := rc.query.Get("$top")
	if s == "" {
		return -1, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > localtable.MaxPageSize {
		return 0, wireError(localtable.CodeInvalidInput, "The $top value "+odata.Quote(s)+" is not an integer from 0 to 1000.")
	}
	return n, nil
}

// pageTop is the page size for the core: 0 (its default, 1000) when $top
// is absent.
func pageTop(top int) int { return max(top, 0) }

// scanLimit is the QueryOptions.ScanLimit of every query.
func (s *Server) scanLimit() int {
	switch n := s.opts.QueryScanLimit; {
	case n == 0:
		return DefaultQueryScanLimit
	case n < 0:
		return -1 // no bound
	default:
		return n
	}
}
