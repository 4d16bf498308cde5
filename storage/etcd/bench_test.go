package etcd_test

import (
	"fmt"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/storagetest"
)

// The benchmarks run on the test cluster: three members on loopback, one
// machine, fsync off (see cluster_test.go). They measure the engine's and
// etcd's own costs (gRPC, raft, bbolt), not a network's latency; on a real
// cluster each write adds a round trip between members and an fsync.

// BenchmarkEngine runs the storage engine benchmarks (storagetest.Bench).
func BenchmarkEngine(b *testing.B) {
	storagetest.Bench(b, func(b *testing.B) storage.Engine {
		return openEngine(b, nil)
	})
}

// BenchmarkTable runs table-level operations through localtable.Open on
// the etcd engine.
func BenchmarkTable(b *testing.B) {
	open := func(b *testing.B) *localtable.Table {
		a, _ := openAccount(b, "")
		tbl, err := a.CreateTable(bg(), "Bench")
		if err != nil {
			b.Fatal(err)
		}
		return tbl
	}
	entity := func(pk string, i int) localtable.Entity {
		return localtable.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("%09d", i), Properties: localtable.Properties{
			"Name": localtable.StringValue("a name of some length"), "N": localtable.Int64Value(int64(i)),
		}}
	}
	load := func(b *testing.B, tbl *localtable.Table, n int) {
		for start := 0; start < n; start += localtable.MaxTransactionActions {
			var acts []localtable.Action
			for i := start; i < min(n, start+localtable.MaxTransactionActions); i++ {
				acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: entity("p", i)})
			}
			if _, err := tbl.Transact(bg(), acts); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("Insert", func(b *testing.B) {
		tbl := open(b)
		i := 0
		for b.Loop() {
			if _, err := tbl.Insert(bg(), entity("p", i)); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Get", func(b *testing.B) {
		tbl := open(b)
		load(b, tbl, 1000)
		i := 0
		for b.Loop() {
			if _, err := tbl.Get(bg(), "p", fmt.Sprintf("%09d", storagetest.BenchPermute(i, 1000)), nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Transact100", func(b *testing.B) {
		tbl := open(b)
		i := 0
		for b.Loop() {
			var acts []localtable.Action
			for range localtable.MaxTransactionActions {
				acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: entity("p", i)})
				i++
			}
			if _, err := tbl.Transact(bg(), acts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Query1000", func(b *testing.B) {
		tbl := open(b)
		load(b, tbl, 1000)
		for b.Loop() {
			page, err := tbl.Query(bg(), nil)
			if err != nil || len(page.Entities) != 1000 {
				b.Fatalf("Query: %d entities, %v", len(page.Entities), err)
			}
		}
	})
}
