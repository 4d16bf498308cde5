package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage/etcd"
)

// TestFeedTwoAccounts runs the change feed on the etcd engine with two
// Accounts on one prefix, as two server processes on one cluster: both
// write, a watcher on each reads the feed, and the two see the same
// sequence, with no gap, holding each writer's acknowledged writes in the
// order they were acknowledged.
func TestFeedTwoAccounts(t *testing.T) {
	prefix := newPrefix("feed")
	var accounts []*localtable.Account
	for range 2 {
		e := openEngine(t, &etcd.Options{Prefix: prefix})
		a, err := localtable.Open(&localtable.Options{Engine: e, Feed: &localtable.FeedOptions{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		accounts = append(accounts, a)
	}
	if _, err := accounts[0].CreateTable(bg(), "Fed"); err != nil {
		t.Fatal(err)
	}
	const writers, perWriter = 4, 15
	seen := make([][]string, len(accounts))
	var wwg sync.WaitGroup
	for m, a := range accounts {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			ctx, cancel := context.WithTimeout(bg(), time.Minute)
			defer cancel()
			for c, err := range a.Watch(ctx, &localtable.WatchOptions{}) {
				if err != nil {
					t.Errorf("watcher %d: %v", m, err)
					return
				}
				seen[m] = append(seen[m], fmt.Sprintf("%d %v %s/%s %v", c.Revision, c.Kind, c.Entity.PartitionKey, c.Entity.RowKey, c.Entity.Properties["N"]))
				if c.Entity.PartitionKey == "end" {
					return
				}
			}
		}()
	}
	acked := make([][]string, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tbl := accounts[w%2].Table("Fed")
			for i := range perWriter {
				e := localtable.Entity{PartitionKey: fmt.Sprintf("w%d", w), RowKey: fmt.Sprint(i % 3), Properties: localtable.Properties{"N": localtable.Int64Value(int64(i))}}
				if _, err := tbl.Upsert(bg(), e, nil); err != nil {
					if !errors.Is(err, localtable.ErrServerBusy) {
						t.Errorf("writer %d: %v", w, err)
					}
					continue
				}
				acked[w] = append(acked[w], fmt.Sprintf("Replace %s/%s %d", e.PartitionKey, e.RowKey, i))
			}
		}()
	}
	wg.Wait()
	if _, err := accounts[1].Table("Fed").Insert(bg(), localtable.Entity{PartitionKey: "end", RowKey: "end"}); err != nil {
		t.Fatal(err)
	}
	wwg.Wait()
	if !slices.Equal(seen[0], seen[1]) {
		t.Fatalf("the watchers saw different sequences:\n%q\n%q", seen[0], seen[1])
	}
	for i, s := range seen[0] {
		var rev int
		fmt.Sscanf(s, "%d", &rev)
		if rev != i+1 {
			t.Fatalf("change %d has revision %d: a gap or a duplicate", i, rev)
		}
	}
	byWriter := make([][]string, writers)
	for _, s := range seen[0][1 : len(seen[0])-1] {
		var rev, w int
		var kind, rest string
		fmt.Sscanf(s, "%d %s w%d", &rev, &kind, &w)
		rest = s[len(fmt.Sprint(rev))+1:]
		if kind == "Insert" { // the first write of a key inserts it
			rest = "Replace" + rest[len("Insert"):]
		}
		byWriter[w] = append(byWriter[w], rest)
	}
	for w := range writers {
		if !slices.Equal(byWriter[w], acked[w]) {
			t.Errorf("writer %d: feed %q\nacknowledged %q", w, byWriter[w], acked[w])
		}
	}
}

// TestFeedTransaction: on etcd, whose feed stores a transaction's changes
// compressed, a transaction of 100 entities written by one account reaches
// a watcher of another account on the prefix whole: its 100 changes, in
// order, under one commit, each with its entity.
func TestFeedTransaction(t *testing.T) {
	prefix := newPrefix("feedtx")
	var accounts []*localtable.Account
	for range 2 {
		a, err := localtable.Open(&localtable.Options{Engine: openEngine(t, &etcd.Options{Prefix: prefix}), Feed: &localtable.FeedOptions{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		accounts = append(accounts, a)
	}
	tbl, err := accounts[0].CreateTable(bg(), "Orders")
	if err != nil {
		t.Fatal(err)
	}
	acts := make([]localtable.Action, localtable.MaxTransactionActions)
	for i := range acts {
		acts[i] = localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%03d", i),
			Properties: localtable.Properties{"Name": localtable.StringValue("a customer name"), "N": localtable.Int64Value(int64(i))}}}
	}
	if _, err := tbl.Transact(bg(), acts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg(), time.Minute)
	defer cancel()
	var got []localtable.Change
	for c, err := range accounts[1].Watch(ctx, &localtable.WatchOptions{After: 1}) { // after the table's creation
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
		if c.Last {
			break
		}
	}
	if len(got) != len(acts) {
		t.Fatalf("%d changes, want %d", len(got), len(acts))
	}
	for i, c := range got {
		want := acts[i].Entity
		if c.Revision != localtable.Revision(i+2) || c.Commit != 2 || c.Kind != localtable.ChangeInsert || c.Entity.RowKey != want.RowKey ||
			c.Entity.Properties["N"] != want.Properties["N"] || c.Entity.Properties["Name"] != want.Properties["Name"] || c.Entity.ETag == "" {
			t.Fatalf("change %d: %+v, want the insert of %s", i, c, want.RowKey)
		}
	}
}
