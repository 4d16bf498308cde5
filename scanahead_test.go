package localtable

import (
	"context"
	"fmt"
	"testing"

	"github.com/localtable/localtable/storage/memory"
)

// TestScanAheadPages pages through tables of sizes around scanAhead's
// batch with every page size, and a filter that keeps every other entity:
// the pages hold every match once, in order, and only the last page has
// no continuation, wherever a page ends in a batch (its last entity, the
// batch's last, the table's last).
func TestScanAheadPages(t *testing.T) {
	ctx := context.Background()
	even := benchPred{match: func(r PropertyReader) bool {
		v, ok := r.Property("N")
		return ok && v.Int32()%2 == 0
	}}
	for _, size := range []int{scanAheadBatch - 1, scanAheadBatch, scanAheadBatch + 1, 2 * scanAheadBatch, 2*scanAheadBatch + 3} {
		a, err := Open(&Options{Engine: memory.New(nil)})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		tbl, err := a.CreateTable(ctx, "Ahead")
		if err != nil {
			t.Fatal(err)
		}
		for i := range size {
			if _, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%03d", i), Properties: Properties{"N": Int32Value(int32(i))}}); err != nil {
				t.Fatal(err)
			}
		}
		for _, filter := range []Predicate{nil, even} {
			want := size
			if filter != nil {
				want = (size + 1) / 2
			}
			for pageSize := 1; pageSize <= want+1; pageSize++ {
				opts := &QueryOptions{Filter: filter, PageSize: pageSize}
				got, next := 0, 0
				for {
					page, err := tbl.Query(ctx, opts)
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range page.Entities {
						if e.RowKey != fmt.Sprintf("r%03d", next) {
							t.Fatalf("size %d, page size %d, filter %v: got %s, want r%03d", size, pageSize, filter != nil, e.RowKey, next)
						}
						next++
						if filter != nil {
							next++
						}
						got++
					}
					if page.Continuation.IsZero() {
						break
					}
					if got == want {
						// A continuation after the last match is allowed only
						// if a key follows it; its page must then be empty.
						last, err := tbl.Query(ctx, &QueryOptions{Filter: filter, PageSize: pageSize, Continuation: page.Continuation})
						if err != nil || len(last.Entities) != 0 || !last.Continuation.IsZero() {
							t.Fatalf("size %d, page size %d: after the last match, %d more, %v", size, pageSize, len(last.Entities), err)
						}
						break
					}
					opts.Continuation = page.Continuation
				}
				if got != want {
					t.Fatalf("size %d, page size %d, filter %v: %d entities, want %d", size, pageSize, filter != nil, got, want)
				}
			}
		}
	}
}
