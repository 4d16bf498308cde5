package etcd_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/localtable/localtable"
)

// TestTwoAccountsKnownGap runs two Accounts on one prefix, as two
// processes on two machines would, and shows what today's table layer
// gets wrong across processes. Each subtest SKIPS with "KNOWN GAP" while
// the gap is there and passes once the table layer commits with
// storage.VersionedEngine.CommitIf (see README.md, "What the table layer
// still needs"); the storage half of the fix is pinned by the
// conformance suite's Versioned* subtests.
func TestTwoAccountsKnownGap(t *testing.T) {
	t.Run("ETag-guarded updates", func(t *testing.T) {
		prefix := newPrefix("gap-etag")
		a, _ := openAccount(t, prefix)
		ta, err := a.CreateTable(bg(), "Counters")
		must(t, err)
		_, err = ta.Insert(bg(), localtable.Entity{PartitionKey: "c", RowKey: "c", Properties: localtable.Properties{"N": localtable.Int32Value(0)}})
		must(t, err)
		b, _ := openAccount(t, prefix) // opened after: its catalog has the table
		tb := b.Table("Counters")

		// Each account increments N by read, Update with If-Match, retry
		// on ErrConditionNotMet: correct ETags make this lose nothing.
		const each = 40
		var wg sync.WaitGroup
		for _, tbl := range []*localtable.Table{ta, tb} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					for {
						e, err := tbl.Get(bg(), "c", "c", nil)
						if err != nil {
							t.Error(err)
							return
						}
						n := e.Properties["N"].Int32()
						_, err = tbl.Update(bg(), localtable.Entity{PartitionKey: "c", RowKey: "c",
							Properties: localtable.Properties{"N": localtable.Int32Value(n + 1)}}, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: e.ETag})

						if err == nil {
							break
						}
						if !errors.Is(err, localtable.ErrConditionNotMet) {
							t.Error(err)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		e, err := ta.Get(bg(), "c", "c", nil)
		must(t, err)
		if got := e.Properties["N"].Int32(); got != 2*each {
			t.Skipf("KNOWN GAP (issue 15): %d of %d If-Match-guarded increments from two Accounts were lost: "+
				"the table layer checks If-Match under an in-process partition lock and commits unconditionally, "+
				"so both processes' updates of one ETag succeed", 2*each-got, 2*each)
		}
	})

	t.Run("table IDs", func(t *testing.T) {
		prefix := newPrefix("gap-ids")
		a, _ := openAccount(t, prefix)
		b, _ := openAccount(t, prefix)
		alpha, err := a.CreateTable(bg(), "Alpha")
		must(t, err)
		beta, err := b.CreateTable(bg(), "Beta")
		must(t, err)
		_, err = alpha.Insert(bg(), localtable.Entity{PartitionKey: "p", RowKey: "only-in-alpha"})
		must(t, err)
		if n := countEntities(t, beta, nil); n != 0 {
			t.Skipf("KNOWN GAP (issue 15): table Beta, created by a second Account, shows %d entity of table Alpha: "+
				"each Account allocates table IDs from its own cached counter, so both tables got the same ID", n)
		}
	})
}
