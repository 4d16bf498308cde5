package tests

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage/pebble"
)

var feedOn = &localtable.Options{Feed: &localtable.FeedOptions{}}

// collect reads n changes of a watch, failing the test after a while.
func collect(t *testing.T, a *localtable.Account, opts *localtable.WatchOptions, n int) []localtable.Change {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []localtable.Change
	if n == 0 {
		return nil
	}
	for c, err := range a.Watch(ctx, opts) {
		if err != nil {
			t.Fatalf("Watch after %d changes: %v", len(got), err)
		}
		got = append(got, c)
		if len(got) == n {
			return got
		}
	}
	t.Fatalf("Watch ended after %d changes, want %d", len(got), n)
	return nil
}

func describeChanges(cs []localtable.Change) []string {
	var out []string
	for _, c := range cs {
		s := fmt.Sprintf("%d/%d %v %s", c.Revision, c.Commit, c.Kind, c.Table)
		if c.Kind.IsEntity() {
			s += fmt.Sprintf(" %s/%s %v", c.Entity.PartitionKey, c.Entity.RowKey, c.Entity.Properties["N"])
		}
		if c.Last {
			s += " last"
		}
		out = append(out, s)
	}
	return out
}

// TestFeedChanges checks what the feed holds for each kind of write, on
// every engine: a change per committed action, revisions from 1 in commit
// order, a transaction's changes together and marked, nothing for writes
// that failed, and a watch resumed from any revision.
func TestFeedChanges(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a := tabletest.OpenAccount(t, eng, feedOn)
		tbl, err := a.CreateTable(ctx, "Orders")
		if err != nil {
			t.Fatal(err)
		}
		n := func(i int64) localtable.Properties { return localtable.Properties{"N": localtable.Int64Value(i)} }
		e := func(rk string, i int64) localtable.Entity {
			return localtable.Entity{PartitionKey: "p", RowKey: rk, Properties: n(i)}
		}
		tag, _ := tbl.Insert(ctx, e("a", 1))
		tbl.Insert(ctx, e("a", 2))             // fails: exists
		tbl.Transact(ctx, []localtable.Action{ // fails at its 2nd action: nothing
			{Type: localtable.ActionInsert, Entity: e("x", 0)},
			{Type: localtable.ActionUpdateReplace, Entity: e("missing", 0)},
		})
		tbl.Transact(ctx, []localtable.Action{
			{Type: localtable.ActionInsert, Entity: e("b", 3)},
			{Type: localtable.ActionUpdateMerge, Entity: e("a", 4), IfMatch: tag},
			{Type: localtable.ActionUpsertReplace, Entity: e("c", 5)},
		})
		tbl.Update(ctx, e("a", 6), &localtable.UpdateOptions{IfMatch: tag}) // fails: stale
		tbl.Delete(ctx, "p", "b", nil)
		a.DeleteTable(ctx, "Orders")
		want := []string{
			"1/1 TableCreated Orders last",
			"2/2 Insert Orders p/a 1 last",
			"3/3 Insert Orders p/b 3",
			"4/3 Merge Orders p/a 4",
			"5/3 Insert Orders p/c 5 last",
			"6/6 Delete Orders p/b <null> last",
			"7/7 TableDeleted Orders last",
		}
		got := collect(t, a, &localtable.WatchOptions{}, len(want))
		if d := describeChanges(got); !slices.Equal(d, want) {
			t.Fatalf("feed:\n%q\nwant\n%q", d, want)
		}
		// nil options are the zero options: from the oldest change kept.
		if d := describeChanges(collect(t, a, nil, len(want))); !slices.Equal(d, want) {
			t.Errorf("Watch with nil options:\n%q\nwant\n%q", d, want)
		}
		if got[3].Entity.ETag == "" || got[3].Entity.ETag != got[2].Entity.ETag {
			t.Errorf("a transaction's changes have ETags %q and %q, want its one ETag", got[2].Entity.ETag, got[3].Entity.ETag)
		}
		if rev, err := a.Revision(ctx); err != nil || rev != 7 {
			t.Errorf("Revision = %d, %v; want 7", rev, err)
		}
		// Resumed from any revision: exactly the changes after it.
		for after := range want {
			got := collect(t, a, &localtable.WatchOptions{After: localtable.Revision(after)}, len(want)-after)
			if d := describeChanges(got); !slices.Equal(d, want[after:]) {
				t.Errorf("after %d: %q", after, d)
			}
		}
		// A table and a filter select.
		if _, err := a.CreateTable(ctx, "Other"); err != nil {
			t.Fatal(err)
		}
		a.Table("Other").Insert(ctx, e("z", 9))
		sel := collect(t, a, &localtable.WatchOptions{Table: "other"}, 2)
		if d := describeChanges(sel); d[0] != "8/8 TableCreated Other last" || d[1] != "9/9 Insert Other p/z 9 last" {
			t.Errorf("table Other: %q", d)
		}
	})
}

// TestWatchBadTable: a watch of a name no table can have fails at once
// rather than waiting for changes that cannot come.
func TestWatchBadTable(t *testing.T) {
	a := tabletest.OpenAccount(t, tabletest.Engines[0], feedOn)
	for _, err := range a.Watch(context.Background(), &localtable.WatchOptions{Table: "b@d name"}) {
		if !errors.Is(err, localtable.ErrInvalidTableName) {
			t.Fatalf("Watch of table %q: %v, want ErrInvalidTableName", "b@d name", err)
		}
		return
	}
	t.Fatal("Watch of a bad table name yielded nothing")
}

func TestFeedOff(t *testing.T) {
	a := tabletest.OpenAccount(t, tabletest.Engines[0], nil)
	for _, err := range a.Watch(context.Background(), nil) {
		if !errors.Is(err, localtable.ErrFeedOff) {
			t.Fatalf("Watch without a feed: %v", err)
		}
		return
	}
	t.Fatal("Watch without a feed yielded nothing")
}

// TestFeedCompacted checks retention by count: a watch from a revision
// the feed no longer keeps fails with the oldest one it keeps.
func TestFeedCompacted(t *testing.T) {
	ctx := context.Background()
	a := tabletest.OpenAccount(t, tabletest.Engines[0], &localtable.Options{Feed: &localtable.FeedOptions{KeepChanges: 10}})
	tbl, err := a.CreateTable(ctx, "Busy")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2100 {
		if _, err := tbl.Upsert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i % 7)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var ce *localtable.FeedCompactedError
	for _, err := range a.Watch(ctx, &localtable.WatchOptions{After: 5}) {
		if !errors.As(err, &ce) || !errors.Is(err, localtable.ErrFeedCompacted) || ce.Oldest <= 6 {
			t.Fatalf("Watch after 5: %v", err)
		}
		break
	}
	// From the oldest kept on, nothing is missing.
	got := collect(t, a, &localtable.WatchOptions{After: ce.Oldest - 1}, int(2101-ce.Oldest+1))
	for i, c := range got {
		if c.Revision != ce.Oldest+localtable.Revision(i) {
			t.Fatalf("change %d has revision %d", i, c.Revision)
		}
	}
	if got[len(got)-1].Revision != 2101 {
		t.Fatalf("last revision %d", got[len(got)-1].Revision)
	}
}

// TestFeedWatchersSeeHistory runs writers making random writes (failing
// ones among them) and watchers, some restarting from their last revision
// mid-run; every watcher must see the same sequence, with no gap and no
// duplicate, in which each writer's acknowledged writes appear in the
// order they were acknowledged. On a shared engine two accounts write and
// watch one store.
func TestFeedWatchersSeeHistory(t *testing.T) {
	ctx := context.Background()
	for _, eng := range tabletest.Engines {
		t.Run(eng.Name, func(t *testing.T) {
			var accounts []*localtable.Account
			if eng.Name == "shared" {
				store := sharedmem.New()
				for range 2 {
					accounts = append(accounts, tabletest.OpenAccount(t, eng, &localtable.Options{Engine: store.Open(), Feed: &localtable.FeedOptions{}}))
				}
			} else {
				accounts = append(accounts, tabletest.OpenAccount(t, eng, feedOn))
			}
			if _, err := accounts[0].CreateTable(ctx, "Hist"); err != nil {
				t.Fatal(err)
			}
			const writers, perWriter, watchers = 4, 60, 6
			// Watchers, each on one of the accounts, run while the writers
			// write, some restarting midway from the last revision they
			// saw; each stops at the end marker written last.
			seen := make([][]localtable.Change, watchers)
			var wwg sync.WaitGroup
			for m := range watchers {
				wwg.Add(1)
				go func() {
					defer wwg.Done()
					a := accounts[m%len(accounts)]
					var after localtable.Revision
					ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
					defer cancel()
					for restarts := 0; ; restarts++ {
						for c, err := range a.Watch(ctx, &localtable.WatchOptions{After: after}) {
							if err != nil {
								t.Errorf("watcher %d: %v", m, err)
								return
							}
							seen[m] = append(seen[m], c)
							after = c.Revision
							if c.Entity.PartitionKey == "end" {
								return
							}
							if m%2 == 1 && restarts < 3 && len(seen[m])%25 == 0 {
								break // restart from after
							}
						}
					}
				}()
			}
			acked := make([][]string, writers) // each writer's acknowledged writes: pk/rk N
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tbl := accounts[w%len(accounts)].Table("Hist")
					r := rand.New(rand.NewPCG(uint64(w), 3))
					tags := map[string]localtable.ETag{} // the ETag this writer last got per row
					for i := range perWriter {
						pk := fmt.Sprintf("w%d", w)
						ent := func(rk string) localtable.Entity {
							return localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: localtable.Properties{"N": localtable.Int64Value(int64(i))}}
						}
						rk := fmt.Sprint(r.IntN(5))
						var acts []localtable.Action
						switch r.IntN(4) {
						case 0: // fails when it exists
							acts = []localtable.Action{{Type: localtable.ActionInsert, Entity: ent(rk)}}
						case 1: // conditional on the ETag last seen: fails if stale or missing
							acts = []localtable.Action{{Type: localtable.ActionUpdateMerge, Entity: ent(rk), IfMatch: tags[rk]}}
							if tags[rk] == "" {
								acts[0].IfMatch = localtable.ETag(`W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`)
							}
						case 2: // a transaction of two, which fails as a whole if its insert does
							other := fmt.Sprint((r.IntN(4) + 1 + r.IntN(5)) % 5)
							if other == rk {
								other = rk + "x"
							}
							acts = []localtable.Action{
								{Type: localtable.ActionUpsertReplace, Entity: ent(rk)},
								{Type: localtable.ActionType(r.IntN(2) * int(localtable.ActionUpsertMerge)), Entity: ent(other)}, // Insert or UpsertMerge
							}
						default:
							acts = []localtable.Action{{Type: localtable.ActionUpsertReplace, Entity: ent(rk)}}
						}
						got, err := tbl.Transact(ctx, acts)
						switch {
						case err == nil:
							for j, a := range acts {
								acked[w] = append(acked[w], fmt.Sprintf("%s/%s %d", pk, a.Entity.RowKey, i))
								tags[a.Entity.RowKey] = got[j]
							}
						case !errors.Is(err, localtable.ErrEntityExists) && !errors.Is(err, localtable.ErrConditionNotMet) && !errors.Is(err, localtable.ErrEntityNotFound):
							t.Errorf("writer %d: %v", w, err)
						}
					}
				}()
			}
			// One more writer creates and deletes a table of its own, from
			// each account in turn: its changes interleave with the others'.
			var tableOps []string
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					a := accounts[i%len(accounts)]
					if _, err := a.CreateTable(ctx, "Side"); err != nil {
						t.Errorf("create Side: %v", err)
						return
					}
					tableOps = append(tableOps, "TableCreated Side")
					if err := a.DeleteTable(ctx, "Side"); err != nil {
						t.Errorf("delete Side: %v", err)
						return
					}
					tableOps = append(tableOps, "TableDeleted Side")
				}
			}()
			wg.Wait()
			if _, err := accounts[0].Table("Hist").Insert(ctx, localtable.Entity{PartitionKey: "end", RowKey: "end"}); err != nil {
				t.Fatal(err)
			}
			wwg.Wait()
			total := 2 + len(tableOps) // the table's creation, the end marker and Side's
			for _, a := range acked {
				total += len(a)
			}
			if len(seen[0]) != total {
				t.Fatalf("watcher 0 saw %d changes, %d were committed", len(seen[0]), total)
			}
			for m := 1; m < watchers; m++ {
				if !slices.Equal(describeChanges(seen[m]), describeChanges(seen[0])) {
					t.Fatalf("watcher %d saw another sequence than watcher 0", m)
				}
			}
			for i, c := range seen[0] {
				if c.Revision != localtable.Revision(i+1) {
					t.Fatalf("change %d has revision %d: a gap or a duplicate", i, c.Revision)
				}
			}
			// Each writer's acknowledged writes, in order, and nothing else.
			byWriter := make([][]string, writers)
			var sideOps []string
			for _, c := range seen[0][1 : total-1] {
				if c.Table == "Side" {
					sideOps = append(sideOps, fmt.Sprintf("%v %s", c.Kind, c.Table))
					continue
				}
				var w int
				fmt.Sscanf(c.Entity.PartitionKey, "w%d", &w)
				byWriter[w] = append(byWriter[w], fmt.Sprintf("%s/%s %v", c.Entity.PartitionKey, c.Entity.RowKey, c.Entity.Properties["N"]))
			}
			for w := range writers {
				if !slices.Equal(byWriter[w], acked[w]) {
					t.Errorf("writer %d: feed %q\nacknowledged %q", w, byWriter[w], acked[w])
				}
			}
			if !slices.Equal(sideOps, tableOps) {
				t.Errorf("table Side: feed %q\nacknowledged %q", sideOps, tableOps)
			}
		})
	}
}

// TestFeedLive checks that a watcher from now receives the commits made
// while it waits, in order.
func TestFeedLive(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a := tabletest.OpenAccount(t, eng, feedOn)
		tbl, err := a.CreateTable(ctx, "Live")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan []localtable.Change)
		ready := make(chan struct{})
		go func() {
			rev, _ := a.Revision(ctx)
			close(ready)
			done <- collect(t, a, &localtable.WatchOptions{After: rev}, 50)
		}()
		<-ready
		for i := range 50 {
			if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
		got := <-done
		for i, c := range got {
			if c.Entity.RowKey != fmt.Sprint(i) || c.Kind != localtable.ChangeInsert {
				t.Fatalf("change %d: %v %s", i, c.Kind, c.Entity.RowKey)
			}
		}
	})
}

// TestFeedReopenAndPowerLoss writes on pebble, loses power (with only what
// was synced kept) and reopens: the feed holds exactly the changes of the
// writes that survived, and goes on from there.
func TestFeedReopenAndPowerLoss(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	open := func(fs vfs.FS, noSync bool) *localtable.Account {
		db, err := pebble.Open("db", &pebble.Options{FS: fs, NoSync: noSync})
		if err != nil {
			t.Fatal(err)
		}
		a, err := localtable.Open(&localtable.Options{Engine: db, Feed: &localtable.FeedOptions{}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := open(mem, false)
	tbl, _ := a.CreateTable(ctx, "Durable")
	for i := range 20 {
		tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)})
	}
	a.Close()
	// Reopened: the history is there, and revisions go on.
	a = open(mem, true) // now without syncs: a power loss will lose writes
	tbl = a.Table("Durable")
	for i := 20; i < 40; i++ {
		tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)})
	}
	img := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rand.New(rand.NewPCG(1, 2))})
	if got := collect(t, a, &localtable.WatchOptions{}, 41); got[40].Revision != 41 || got[40].Entity.RowKey != "39" {
		t.Fatalf("before the power loss, the feed ends with %v", got[40])
	}
	a.Close()

	b := open(img, false)
	defer b.Close()
	var rows []string
	for e, err := range b.Table("Durable").QueryAll(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, e.RowKey)
	}
	rev, err := b.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	feed := collect(t, b, &localtable.WatchOptions{}, int(rev))
	var fed []string
	for _, c := range feed[1:] {
		fed = append(fed, c.Entity.RowKey)
	}
	slices.Sort(rows)
	slices.Sort(fed)
	if !slices.Equal(rows, fed) {
		t.Fatalf("after the power loss: entities %q, feed %q", rows, fed)
	}
	if len(rows) < 20 {
		t.Fatalf("%d entities survived; the 20 synced ones must", len(rows))
	}
}

// TestFeedVerify checks that Verify knows the feed's keys, and reports a
// feed record that does not decode.
func TestFeedVerify(t *testing.T) {
	ctx := context.Background()
	a := tabletest.OpenAccount(t, tabletest.Engines[0], feedOn)
	tbl, err := a.CreateTable(ctx, "Checked")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("Verify of a store with a feed: %+v, %v", rep, err)
	}
}

// TestFeedFilter checks that a watch's filter selects entity changes
// (with an empty PartitionKey too) and lets table changes through.
func TestFeedFilter(t *testing.T) {
	ctx := context.Background()
	a := tabletest.OpenAccount(t, tabletest.Engines[0], feedOn)
	tbl, err := a.CreateTable(ctx, "Filtered")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		e := localtable.Entity{PartitionKey: "", RowKey: fmt.Sprint(i), Properties: localtable.Properties{"N": localtable.Int64Value(int64(i))}}
		if _, err := tbl.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	f, err := filter.Parse("N ge 4L")
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, a, &localtable.WatchOptions{Filter: f}, 3)
	if d := describeChanges(got); !slices.Equal(d, []string{"1/1 TableCreated Filtered last", "6/6 Insert Filtered /4 4 last", "7/7 Insert Filtered /5 5 last"}) {
		t.Fatalf("filtered feed: %q", d)
	}
}

// TestFeedKeepFor checks retention by age, on the account's clock.
func TestFeedKeepFor(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	clock := tabletest.NewFakeClock(t0)
	a := tabletest.OpenAccount(t, tabletest.Engines[0], &localtable.Options{Clock: clock.Now, Feed: &localtable.FeedOptions{KeepFor: time.Minute}})
	tbl, err := a.CreateTable(ctx, "Aging")
	if err != nil {
		t.Fatal(err)
	}
	write := func(n int) {
		for i := range n {
			if _, err := tbl.Upsert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i % 5)}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(1100) // revisions 2 … 1101, at t0
	clock.Set(t0.Add(2 * time.Minute))
	write(1000) // past revision 2048: a pruning, which drops what is older than a minute
	var ce *localtable.FeedCompactedError
	for _, err := range a.Watch(ctx, &localtable.WatchOptions{After: 1}) {
		if !errors.As(err, &ce) || ce.Oldest <= 1101 {
			t.Fatalf("Watch after 1: %v, want the changes of t0 gone", err)
		}
		break
	}
	got := collect(t, a, &localtable.WatchOptions{After: ce.Oldest - 1}, 1)
	if got[0].Entity.Timestamp.Before(t0.Add(time.Minute)) {
		t.Fatalf("the oldest change kept is of %v", got[0].Entity.Timestamp)
	}
}

// TestFeedManyWatchers runs 1,000 watchers on one account: each gets
// every change.
func TestFeedManyWatchers(t *testing.T) {
	ctx := context.Background()
	a := tabletest.OpenAccount(t, tabletest.Engines[0], feedOn)
	tbl, err := a.CreateTable(ctx, "Crowd")
	if err != nil {
		t.Fatal(err)
	}
	const watchers, changes = 1000, 20
	var wg sync.WaitGroup
	counts := make([]int, watchers)
	ready := make(chan struct{}, watchers)
	for w := range watchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			ready <- struct{}{}
			for c, err := range a.Watch(ctx, &localtable.WatchOptions{After: 1}) {
				if err != nil {
					t.Error(err)
					return
				}
				counts[w]++
				if c.Revision == changes+1 {
					return
				}
			}
		}()
	}
	for range watchers {
		<-ready
	}
	for i := range changes {
		if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	for w, n := range counts {
		if n != changes {
			t.Fatalf("watcher %d got %d changes of %d", w, n, changes)
		}
	}
}

// TestFeedRevisionsNeverGoBack checks that a revision handed out is never
// handed out again, on a pebble directory: after a pruning by age that
// leaves no change in the feed, and after a Restore to a checkpoint taken
// before later commits, each followed by a reopen.
func TestFeedRevisionsNeverGoBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	clock := tabletest.NewFakeClock(t0)
	open := func() *localtable.Account {
		db, err := pebble.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := localtable.Open(&localtable.Options{Engine: db, Clock: clock.Now, Feed: &localtable.FeedOptions{KeepFor: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	revision := func(a *localtable.Account) localtable.Revision {
		t.Helper()
		r, err := a.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := open()
	tbl, err := a.CreateTable(ctx, "Kept")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := a.Checkpoint(ctx) // at revision 1
	if err != nil {
		t.Fatal(err)
	}
	// 1,100 revisions in transactions of 100, then an hour later one more
	// transaction: it crosses revision 1,024 and prunes every record of
	// the first hour, its own being the only one left.
	insert := func(from, n int) {
		t.Helper()
		acts := make([]localtable.Action, n)
		for i := range acts {
			acts[i] = localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%06d", from+i)}}
		}
		if _, err := tbl.Transact(ctx, acts); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		insert(i*100, 100)
	}
	clock.Set(t0.Add(time.Hour))
	insert(1000, 100)
	if r := revision(a); r != 1101 {
		t.Fatalf("revision %d after 1,100 inserts and a creation, want 1101", r)
	}
	for _, err := range a.Watch(ctx, &localtable.WatchOptions{After: 1}) {
		var ce *localtable.FeedCompactedError
		if !errors.As(err, &ce) || ce.Oldest != 1002 {
			t.Fatalf("Watch after 1: %v, want the first hour's records pruned", err)
		}
		break
	}
	a.Close()

	a = open()
	if r := revision(a); r != 1101 {
		t.Fatalf("revision %d after a reopen, want 1101", r)
	}
	tbl = a.Table("Kept")
	insert(2000, 1) // revision 1102
	// A Restore to a state of revision 1, and reopens: the next revision
	// is still 1103.
	cp.Close()
	cp, err = a.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	insert(3000, 5) // 1103 … 1107
	if err := a.Restore(ctx, cp); err != nil {
		t.Fatal(err)
	}
	cp.Close()
	if r := revision(a); r != 1108 {
		t.Fatalf("revision %d after a Restore, want 1108 (its own change; never lower)", r)
	}
	a.Close()
	a = open()
	defer a.Close()
	if r := revision(a); r != 1108 {
		t.Fatalf("revision %d after a Restore and a reopen, want 1108", r)
	}
	tbl = a.Table("Kept")
	insert(4000, 1)
	got := collect(t, a, &localtable.WatchOptions{After: 1106}, 3)
	if d := describeChanges(got); !slices.Equal(d, []string{"1107/1103 Insert Kept p/003004 <null> last", "1108/1108 Restored  last", "1109/1109 Insert Kept p/004000 <null> last"}) {
		t.Fatalf("the changes around the Restore: %q", d)
	}
}

// TestFeedRestore checks, on every engine, that a Restore is a change of
// the feed, ChangeRestored, that reaches every watcher, of a table or
// with a filter too, live and resumed, between the changes before and
// after it.
func TestFeedRestore(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a := tabletest.OpenAccount(t, eng, feedOn)
		tbl, err := a.CreateTable(ctx, "Restored") // revision 1
		if err != nil {
			t.Fatal(err)
		}
		cp, err := a.Checkpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer cp.Close()
		f, err := filter.Parse("N eq 1L")
		if err != nil {
			t.Fatal(err)
		}
		live := make(chan []localtable.Change, 1)
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		go func() {
			var got []localtable.Change
			for c, err := range a.Watch(wctx, &localtable.WatchOptions{After: 1, Table: "restored", Filter: f}) {
				if err != nil {
					t.Errorf("live watch: %v", err)
					break
				}
				if got = append(got, c); len(got) == 2 {
					break
				}
			}
			live <- got
		}()
		for i := range 3 {
			e := localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i), Properties: localtable.Properties{"N": localtable.Int64Value(int64(i))}}
			if _, err := tbl.Insert(ctx, e); err != nil { // revisions 2, 3, 4
				t.Fatal(err)
			}
		}
		if err := a.Restore(ctx, cp); err != nil { // revision 5
			t.Fatal(err)
		}
		if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "after"}); err != nil { // 6
			t.Fatal(err)
		}
		want := []string{"3/3 Insert Restored p/1 1 last", "5/5 Restored  last"}
		if d := describeChanges(<-live); !slices.Equal(d, want) {
			t.Fatalf("live, of a table, filtered: %q, want %q", d, want)
		}
		want = []string{"5/5 Restored  last", "6/6 Insert Restored p/after <null> last"}
		if d := describeChanges(collect(t, a, &localtable.WatchOptions{After: 4, Table: "Other"}, 1)); !slices.Equal(d, want[:1]) {
			t.Fatalf("resumed, of another table: %q, want %q", d, want[:1])
		}
		if d := describeChanges(collect(t, a, &localtable.WatchOptions{After: 4}, 2)); !slices.Equal(d, want) {
			t.Fatalf("resumed: %q, want %q", d, want)
		}
	})
}

// TestFeedWatchBeyondRevision: watching after a revision the account has
// not reached fails at once, as the server's $changes refuses it.
func TestFeedWatchBeyondRevision(t *testing.T) {
	a := tabletest.OpenAccount(t, tabletest.Engines[0], feedOn)
	if _, err := a.CreateTable(ctx, "Ahead"); err != nil { // revision 1
		t.Fatal(err)
	}
	for _, err := range a.Watch(ctx, &localtable.WatchOptions{After: 2}) {
		if !errors.Is(err, localtable.ErrInvalidInput) {
			t.Fatalf("Watch after 2 at revision 1: %v, want ErrInvalidInput", err)
		}
		break
	}
	got := collect(t, a, &localtable.WatchOptions{After: 0}, 1)
	if got[0].Revision != 1 {
		t.Fatalf("from the start: %v", describeChanges(got))
	}
}
