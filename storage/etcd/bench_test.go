package etcd_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/etcd"
	"github.com/localtable/localtable/storage/memory"
	"github.com/localtable/localtable/storage/pebble"
	"github.com/localtable/localtable/storage/storagetest"
)

// The benchmarks run etcd beside the engines of the main module, memory
// and pebble (on disk, every commit fsynced), with the same code. etcd is
// the test cluster: three members on loopback, one machine, fsync off
// (see cluster_test.go), so its figures are the engine's and etcd's own
// costs (gRPC, raft, bbolt), not a network's latency nor a disk's; on a
// real cluster each write adds a round trip between members and an fsync.
//
//	go test -run XXX -bench . -benchtime 2s

// benchEngine is an engine of the comparison.
type benchEngine struct {
	name string
	open func(b *testing.B) storage.Engine
}

var benchEngines = []benchEngine{
	{"memory", func(*testing.B) storage.Engine { return memory.New(nil) }},
	{"pebble", func(b *testing.B) storage.Engine {
		db, err := pebble.Open(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		return db
	}},
	{"etcd", func(b *testing.B) storage.Engine { return openEngine(b, nil) }},
}

// BenchmarkEngine runs the storage engine benchmarks (storagetest.Bench)
// on each engine.
func BenchmarkEngine(b *testing.B) {
	for _, be := range benchEngines {
		b.Run(be.name, func(b *testing.B) {
			storagetest.Bench(b, be.open)
		})
	}
}

// BenchmarkTable runs table-level operations through localtable.Open on
// each engine: a single insert, a point get, a transaction of 100 inserts,
// and a query of a range of 100 entities of a partition of 1000.
func BenchmarkTable(b *testing.B) {
	entity := func(pk string, i int) localtable.Entity {
		return localtable.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("%09d", i), Properties: localtable.Properties{
			"Name": localtable.StringValue("a name of some length"), "N": localtable.Int64Value(int64(i)),
		}}
	}
	for _, be := range benchEngines {
		open := func(b *testing.B) *localtable.Table {
			a, err := localtable.Open(&localtable.Options{Engine: be.open(b)})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { a.Close() })
			tbl, err := a.CreateTable(bg(), "Bench")
			if err != nil {
				b.Fatal(err)
			}
			return tbl
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
		b.Run(be.name+"/Insert", func(b *testing.B) {
			tbl := open(b)
			i := 0
			for b.Loop() {
				if _, err := tbl.Insert(bg(), entity("p", i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(be.name+"/Get", func(b *testing.B) {
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
		b.Run(be.name+"/Transact100", func(b *testing.B) {
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
		b.Run(be.name+"/Range100", func(b *testing.B) {
			tbl := open(b)
			load(b, tbl, 1000)
			i := 0
			for b.Loop() {
				lo := storagetest.BenchPermute(i, 900)
				f, err := filter.Parse(fmt.Sprintf("PartitionKey eq 'p' and RowKey ge '%09d' and RowKey lt '%09d'", lo, lo+100))
				if err != nil {
					b.Fatal(err)
				}
				page, err := tbl.Query(bg(), &localtable.QueryOptions{Filter: f})
				if err != nil || len(page.Entities) != 100 {
					b.Fatalf("Query: %d entities, %v", len(page.Entities), err)
				}
				i++
			}
		})
	}
}

// withoutNotify is an etcd engine that hides its storage.ChangeNotifier,
// so that the feed's watchers poll for other processes' commits, as they
// did before the engine could notify.
type withoutNotify struct {
	storage.VersionedEngine
	storage.MultiGetter
	storage.ContextReader
}

// BenchmarkFeedDelivery measures how long a commit through one Account
// takes to reach a watcher of the feed on another Account of the same
// prefix (another process, in effect): from the Insert's call to the
// watcher's receipt of its change. "watch" learns of the commit through
// the engine's etcd watch (storage.ChangeNotifier), "poll" by reading the
// feed every 50 ms (the engine's notifier hidden). Run both in turn:
//
//	go test -run XXX -bench FeedDelivery -count 6
func BenchmarkFeedDelivery(b *testing.B) {
	for _, mode := range []string{"poll", "watch"} {
		b.Run(mode, func(b *testing.B) {
			prefix := newPrefix("feed-delivery")
			var accounts []*localtable.Account
			for i := range 2 {
				var eng storage.Engine = openEngine(b, &etcd.Options{Prefix: prefix})
				if mode == "poll" && i == 1 {
					e := eng.(*etcd.Engine)
					eng = withoutNotify{e, e, e}
				}
				a, err := localtable.Open(&localtable.Options{Engine: eng, Feed: &localtable.FeedOptions{}})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { a.Close() })
				accounts = append(accounts, a)
			}
			tbl, err := accounts[0].CreateTable(bg(), "Delivery")
			if err != nil {
				b.Fatal(err)
			}
			rev, err := accounts[0].Revision(bg())
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(bg())
			defer cancel()
			got := make(chan localtable.Revision, 1)
			go func() {
				for c, err := range accounts[1].Watch(ctx, &localtable.WatchOptions{After: rev}) {
					if err != nil {
						return
					}
					got <- c.Revision
				}
			}()
			i := 0
			for b.Loop() {
				if _, err := tbl.Insert(bg(), localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}); err != nil {
					b.Fatal(err)
				}
				rev++
				select {
				case r := <-got:
					if r != rev {
						b.Fatalf("received revision %d, want %d", r, rev)
					}
				case <-time.After(30 * time.Second):
					b.Fatalf("revision %d not received within 30s", rev)
				}
				i++
			}
		})
	}
}
