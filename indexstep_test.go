package localtable

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestBuildStepHoldsItsPartitionsOnly: while a step of an index's build
// is held between its locks and its commit, a write into another
// partition of the table commits, and one into a partition the step
// indexes waits for the step; both are then kept by the index.
func TestBuildStepHoldsItsPartitionsOnly(t *testing.T) {
	defer func(n int) { indexBuildChunk = n }(indexBuildChunk)
	indexBuildChunk = 10
	ctx := context.Background()
	for name, open := range testIndexEngines() {
		t.Run(name, func(t *testing.T) {
			a, tbl := openOrders(t, open)
			for _, pk := range []string{"a", "b"} {
				for i := range 20 {
					if _, err := tbl.Insert(ctx, Entity{PartitionKey: pk, RowKey: fmt.Sprintf("%02d", i), Properties: Properties{"V": Int32Value(int32(i % 3))}}); err != nil {
						t.Fatal(err)
					}
				}
			}
			id, _, err := tbl.declareIndex(ctx, "byV", []string{"V"}, false)
			if err != nil {
				t.Fatal(err)
			}
			held, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			a.beforeCatalogCommit = func(op, _ string) {
				if op == "index-step" {
					once.Do(func() { // not a re-run of the attempt
						close(held)
						<-release
					})
				}
			}
			stepDone := make(chan error, 1)
			go func() { _, err := tbl.buildStep(ctx, id, indexBuildChunk); stepDone <- err }()
			<-held // the first step holds partition "a" (its first 10 entities)
			// A partition whose lock is not "a"'s (partitions share 256).
			lt, _ := a.lookup(ctx, "Orders")
			pk := "b"
			for i := 0; a.partition(lt.id, pk) == a.partition(lt.id, "a"); i++ {
				pk = fmt.Sprint("b", i)
			}
			other := make(chan error, 1)
			go func() {
				_, err := tbl.Upsert(ctx, Entity{PartitionKey: pk, RowKey: "05", Properties: Properties{"V": Int32Value(7)}}, nil)
				other <- err
			}()
			same := make(chan error, 1)
			go func() {
				_, err := tbl.Upsert(ctx, Entity{PartitionKey: "a", RowKey: "05", Properties: Properties{"V": Int32Value(8)}}, nil)
				same <- err
			}()
			select {
			case err := <-other:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				close(release)
				t.Fatal("a write into another partition waited for the build's step")
			}
			select {
			case err := <-same:
				t.Fatalf("a write into the step's partition committed during the step (%v)", err)
			default:
			}
			close(release)
			if err := <-stepDone; err != nil {
				t.Fatal(err)
			}
			if err := <-same; err != nil {
				t.Fatal(err)
			}
			a.beforeCatalogCommit = nil
			verifyOK(t, a)
			if err := tbl.CreateIndex(ctx, "byV", "V"); err != nil {
				t.Fatal(err)
			}
			verifyOK(t, a)
			for v, want := range map[int32]string{7: pk + "/05", 8: "a/05"} {
				page, err := tbl.Query(ctx, &QueryOptions{Filter: indexEq{"V", Int32Value(v)}})
				if err != nil || len(page.Entities) != 1 || page.Entities[0].PartitionKey+"/"+page.Entities[0].RowKey != want || page.Stats.Index != "byV" {
					t.Fatalf("V eq %d: %v via %q, %v; want %s", v, page.Entities, page.Stats.Index, err, want)
				}
			}
		})
	}
}
