package etcd_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage/etcd"
)

// TestExpiryOneSweeper runs table expiry on the etcd engine with two
// Accounts on one prefix, as two server processes on one cluster: both
// sweep at once, but only the one holding the sweeper's lease deletes,
// each expired entity exactly once (one Expired change each in the feed);
// when it closes it gives the lease up and the other takes over.
func TestExpiryOneSweeper(t *testing.T) {
	prefix := newPrefix("expiry")
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var now atomic.Int64
	now.Store(t0.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	var accounts []*localtable.Account
	for range 2 {
		e := openEngine(t, &etcd.Options{Prefix: prefix})
		a, err := localtable.Open(&localtable.Options{Engine: e, Clock: clock, Feed: &localtable.FeedOptions{},
			Expiry: &localtable.ExpiryOptions{Interval: -1, Batch: 7, PassLimit: 25}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		accounts = append(accounts, a)
	}
	tbl, err := accounts[0].CreateTable(bg(), "Sessions")
	must(t, err)
	must(t, tbl.SetExpiry(bg(), "ExpiresAt"))
	if p, err := accounts[1].Table("Sessions").Expiry(bg()); err != nil || p != "ExpiresAt" {
		t.Fatalf("the other account's Expiry = %q, %v", p, err)
	}
	insert := func(a *localtable.Account, from, n int) {
		for i := from; i < from+n; i++ {
			_, err := a.Table("Sessions").Insert(bg(), localtable.Entity{PartitionKey: fmt.Sprintf("p%d", i%4), RowKey: fmt.Sprintf("%04d", i),
				Properties: localtable.Properties{"ExpiresAt": localtable.DateTimeValue(t0.Add(time.Minute))}})
			must(t, err)
		}
	}
	const n = 60
	insert(accounts[0], 0, n)
	rev, err := accounts[0].Revision(bg())
	must(t, err)
	now.Store(t0.Add(time.Minute).UnixNano())
	// Invisible at once, in both accounts.
	for i, a := range accounts {
		if c, err := a.Table("Sessions").Count(bg(), nil); err != nil || c != 0 {
			t.Fatalf("account %d: Count = %d, %v; want 0", i, c, err)
		}
	}
	var deleted [2]atomic.Int64
	var wg sync.WaitGroup
	for i, a := range accounts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				k, err := a.SweepExpired(bg())
				if err != nil {
					t.Errorf("account %d: SweepExpired: %v", i, err)
					return
				}
				deleted[i].Add(int64(k))
			}
		}()
	}
	wg.Wait()
	d0, d1 := deleted[0].Load(), deleted[1].Load()
	if d0+d1 != n || d0 != 0 && d1 != 0 {
		t.Fatalf("deleted %d and %d; want %d by one account alone (the lease's holder)", d0, d1, n)
	}
	holder, other := 0, 1
	if d1 != 0 {
		holder, other = 1, 0
	}
	seen := map[string]int{}
	for c, err := range accounts[other].Watch(bg(), &localtable.WatchOptions{After: rev}) {
		must(t, err)
		if c.Kind != localtable.ChangeExpired {
			t.Fatalf("change %d: %v; want Expired", c.Revision, c.Kind)
		}
		seen[c.Entity.RowKey]++
		if len(seen) == n {
			break
		}
	}
	for rk, k := range seen {
		if k != 1 {
			t.Errorf("%s: %d Expired changes", rk, k)
		}
	}
	// The holder closes, giving the lease up: the other sweeps the next.
	must(t, accounts[holder].Close())
	insert(accounts[other], n, 10)
	now.Store(t0.Add(2 * time.Minute).UnixNano())
	if k, err := accounts[other].SweepExpired(bg()); err != nil || k != 10 {
		t.Fatalf("the other account's pass after the holder's Close = %d, %v; want 10", k, err)
	}
	rep, err := accounts[other].Verify(bg())
	if err != nil || !rep.OK() {
		t.Fatalf("Verify: %v %v", err, rep.Problems)
	}
}

// TestExpiryPolicyIndexDroppedElsewhere: on a shared engine, the index one
// process's SetExpiry declared is dropped with the policy another process
// clears, and the first, which still wrote through it, stops maintaining
// it: Verify of both finds no entry of it left.
func TestExpiryPolicyIndexDroppedElsewhere(t *testing.T) {
	prefix := newPrefix("expiryindex")
	var accounts []*localtable.Account
	for range 2 {
		e := openEngine(t, &etcd.Options{Prefix: prefix})
		a, err := localtable.Open(&localtable.Options{Engine: e, Expiry: &localtable.ExpiryOptions{Interval: -1}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		accounts = append(accounts, a)
	}
	tbl, err := accounts[0].CreateTable(bg(), "Sessions")
	must(t, err)
	must(t, tbl.SetExpiry(bg(), "ExpiresAt"))
	at := localtable.DateTimeValue(time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC))
	for i := range 10 {
		_, err := tbl.Insert(bg(), localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i), Properties: localtable.Properties{"ExpiresAt": at}})
		must(t, err)
	}
	must(t, accounts[1].Table("Sessions").ClearExpiry(bg()))
	_, err = tbl.Insert(bg(), localtable.Entity{PartitionKey: "p", RowKey: "after", Properties: localtable.Properties{"ExpiresAt": at}})
	must(t, err)
	for i, a := range accounts {
		if xs, err := a.Table("Sessions").Indexes(bg()); err != nil || len(xs) != 0 {
			t.Fatalf("account %d: Indexes after the other cleared the policy = %v, %v; want none", i, xs, err)
		}
		rep, err := a.Verify(bg())
		if err != nil || !rep.OK() {
			t.Fatalf("account %d: Verify = %+v, %v", i, rep, err)
		}
	}
}
