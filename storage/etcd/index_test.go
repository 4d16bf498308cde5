package etcd_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/storage/etcd"
)

// TestIndexTwoAccounts runs secondary indexes on the etcd engine with two
// Accounts on one prefix, as two server processes on one cluster: one
// declares an index on a table the other writes into (its catalog cache
// not knowing of it) while the writes go on; every write is kept in the
// index, as Verify checks, and the other account's queries read it.
func TestIndexTwoAccounts(t *testing.T) {
	prefix := newPrefix("index")
	var accounts []*localtable.Account
	for range 2 {
		e := openEngine(t, &etcd.Options{Prefix: prefix})
		a, err := localtable.Open(&localtable.Options{Engine: e})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		accounts = append(accounts, a)
	}
	ta, err := accounts[0].CreateTable(bg(), "Orders")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := accounts[1].GetTable(bg(), "Orders")
	if err != nil {
		t.Fatal(err)
	}
	write := func(i int) error {
		_, err := tb.Upsert(bg(), localtable.Entity{PartitionKey: fmt.Sprintf("p%d", i%3), RowKey: fmt.Sprintf("%04d", i),
			Properties: localtable.Properties{"Total": localtable.Int32Value(int32(i % 50))}}, nil)
		return err
	}
	for i := range 100 {
		if err := write(i); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 100; i < 200; i++ {
			if err := write(i); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	if err := ta.CreateIndex(bg(), "byTotal", "Total"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, a := range accounts {
		rep, err := a.Verify(bg())
		if err != nil || !rep.OK() {
			t.Fatalf("Verify: %v %v %+v", err, rep.Problems, rep.Tables)
		}
	}
	f, err := filter.Parse("Total eq 7")
	if err != nil {
		t.Fatal(err)
	}
	page, err := tb.Query(bg(), &localtable.QueryOptions{Filter: f})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entities) != 4 || page.Stats.Index != "byTotal" {
		t.Fatalf("Total eq 7: %d entities via index %q; want 4 via byTotal", len(page.Entities), page.Stats.Index)
	}
}
