// Package show runs queries for the pattern examples and prints what they
// cost: the entities the engine read (scanned) beside the entities the
// query returned, and the planner's key ranges. The examples use it to put
// a pattern's cost beside the anti-pattern's.
package show

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

// Result is a whole query: every entity it returned, in order, and the work
// it took summed over its pages.
type Result struct {
	Entities []localtable.Entity   // every entity returned, in order
	Stats    localtable.QueryStats // the work, summed over the pages
	Pages    int                   // how many pages the query took
}

// Query runs opts against tbl to the end, following continuations; nil
// opts means the defaults, as for Table.Query.
func Query(ctx context.Context, tbl *localtable.Table, in *localtable.QueryOptions) (Result, error) {
	var r Result
	var opts localtable.QueryOptions
	if in != nil {
		opts = *in
	}
	for {
		page, err := tbl.Query(ctx, &opts)
		if err != nil {
			return r, err
		}
		r.Pages++
		r.Entities = append(r.Entities, page.Entities...)
		r.Stats.Scanned += page.Stats.Scanned
		r.Stats.Returned += page.Stats.Returned
		r.Stats.Ranges += page.Stats.Ranges
		r.Stats.FullScan = r.Stats.FullScan || page.Stats.FullScan
		if page.Stats.Index != "" {
			r.Stats.Index = page.Stats.Index
		}
		if page.Continuation.IsZero() {
			return r, nil
		}
		opts.Continuation = page.Continuation
	}
}

// Filter runs f against tbl to the end and prints one line of its cost,
// labelled: "label: scanned N, returned M (plan)".
func Filter(ctx context.Context, w io.Writer, label string, tbl *localtable.Table, f *filter.Filter) (Result, error) {
	r, err := Query(ctx, tbl, &localtable.QueryOptions{Filter: f})
	if err != nil {
		return r, err
	}
	Cost(w, label, f, r.Stats)
	return r, nil
}

// Cost prints one line: the label, entities scanned and returned, and the
// first line of the filter's plan ("1 key range", "full scan", …).
func Cost(w io.Writer, label string, f *filter.Filter, st localtable.QueryStats) {
	plan, _, _ := strings.Cut(f.Explain(), "\n")
	fmt.Fprintf(w, "%-46s scanned %6d, returned %5d  (%s)\n", label+":", st.Scanned, st.Returned, strings.TrimSuffix(plan, ":"))
}
