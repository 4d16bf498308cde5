package tests

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage/pebble"
)

// Table expiry: a table's expiry policy hides its expired entities from
// every read at once, makes writes treat them as absent, and its sweeper
// deletes them as "expired" changes of the feed.

var expiryT0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// expiringEntity is an entity of pk/rk whose ExpiresAt is at.
func expiringEntity(pk, rk string, at time.Time) localtable.Entity {
	return localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: localtable.Properties{
		"ExpiresAt": localtable.DateTimeValue(at), "N": localtable.Int32Value(1),
	}}
}

// openExpiring opens an account on eng on clock, with the feed on and no
// background sweeper, and a table "ttl" whose expiry property is
// ExpiresAt.
func openExpiring(t *testing.T, eng tabletest.Engine, clock *tabletest.FakeClock, opts *localtable.Options) (*localtable.Account, *localtable.Table) {
	t.Helper()
	o := localtable.Options{Clock: clock.Now, Feed: &localtable.FeedOptions{}, Expiry: &localtable.ExpiryOptions{Interval: -1}}
	if opts != nil {
		o.Engine, o.Expiry = opts.Engine, opts.Expiry
	}
	a := tabletest.OpenAccount(t, eng, &o)
	tbl, err := a.CreateTableIfNotExists(context.Background(), "ttl")
	tabletest.Must(t, err)
	tabletest.Must(t, tbl.SetExpiry(context.Background(), "ExpiresAt"))
	return a, tbl
}

func keysOf(es []localtable.Entity) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.PartitionKey+"/"+e.RowKey)
	}
	return out
}

func TestExpiryVisibility(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		clock := tabletest.NewFakeClock(expiryT0)
		a, tbl := openExpiring(t, eng, clock, nil)
		if p, err := tbl.Expiry(ctx); err != nil || p != "ExpiresAt" {
			t.Fatalf("Expiry = %q, %v; want ExpiresAt", p, err)
		}
		put := func(e localtable.Entity) {
			t.Helper()
			_, err := tbl.Upsert(ctx, e, nil)
			tabletest.Must(t, err)
		}
		put(expiringEntity("p1", "a", expiryT0.Add(10*time.Second))) // p1 holds a alone
		put(expiringEntity("p2", "b", expiryT0.Add(20*time.Second)))
		put(expiringEntity("p2", "a", expiryT0.Add(5*time.Second)))
		put(localtable.Entity{PartitionKey: "p2", RowKey: "c", Properties: localtable.Properties{"N": localtable.Int32Value(1)}})
		put(localtable.Entity{PartitionKey: "p2", RowKey: "d", Properties: localtable.Properties{"ExpiresAt": localtable.StringValue("2000-01-01T00:00:00Z")}})
		put(localtable.Entity{PartitionKey: "p2", RowKey: "e", Properties: localtable.Properties{"ExpiresAt": localtable.Int64Value(0)}})
		all := []string{"p1/a", "p2/a", "p2/b", "p2/c", "p2/d", "p2/e"}
		check := func(want []string) {
			t.Helper()
			var got []string
			for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{PageSize: 1}) {
				tabletest.Must(t, err)
				got = append(got, e.PartitionKey+"/"+e.RowKey)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("QueryAll (pages of 1) = %v; want %v", got, want)
			}
			got = nil
			for r, err := range tbl.Rows(ctx, nil) {
				tabletest.Must(t, err)
				got = append(got, r.PartitionKey()+"/"+r.RowKey())
			}
			if !slices.Equal(got, want) {
				t.Fatalf("Rows = %v; want %v", got, want)
			}
			if n, err := tbl.Count(ctx, nil); err != nil || n != len(want) {
				t.Fatalf("Count = %d, %v; want %d", n, err, len(want))
			}
			// An exact filter on the indexed property: an index-only count
			// would count the expired entries.
			wantBounded := 0
			for _, k := range want {
				if k == "p1/a" || k == "p2/a" || k == "p2/b" {
					wantBounded++
				}
			}
			f := mustParse(t, fmt.Sprintf("ExpiresAt le datetime'%s'", expiryT0.Add(time.Hour).Format(time.RFC3339)))
			if n, err := tbl.Count(ctx, f); err != nil || n != wantBounded {
				t.Fatalf("Count(%v) = %d, %v; want %d", f, n, err, wantBounded)
			}
			page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: f})
			tabletest.Must(t, err)
			if got := keysOf(page.Entities); len(got) != wantBounded {
				t.Fatalf("Query(%v) = %v (index %q); want %d entities", f, got, page.Stats.Index, wantBounded)
			}
			for _, k := range all {
				pk, rk, _ := cut(k)
				_, err := tbl.Get(ctx, pk, rk, nil)
				if slices.Contains(want, k) != (err == nil) {
					t.Fatalf("Get(%s): %v; visible = %v", k, err, slices.Contains(want, k))
				}
				if err != nil && !errors.Is(err, localtable.ErrEntityNotFound) {
					t.Fatalf("Get(%s) of an expired entity: %v; want ErrEntityNotFound", k, err)
				}
				var row localtable.Row
				if rerr := tbl.GetRow(ctx, pk, rk, &row); (rerr == nil) != (err == nil) || rerr != nil && !errors.Is(rerr, localtable.ErrEntityNotFound) {
					t.Fatalf("GetRow(%s): %v; Get: %v", k, rerr, err)
				}
			}
			var parts []string
			for p, err := range tbl.Partitions(ctx) {
				tabletest.Must(t, err)
				parts = append(parts, p)
			}
			var wantParts []string
			for _, k := range want {
				if pk, _, _ := cut(k); !slices.Contains(wantParts, pk) {
					wantParts = append(wantParts, pk)
				}
			}
			if !slices.Equal(parts, wantParts) {
				t.Fatalf("Partitions = %v; want %v", parts, wantParts)
			}
		}
		check(all)
		clock.Set(expiryT0.Add(5*time.Second - 100*time.Nanosecond)) // a tick before p2/a's
		check(all)
		clock.Set(expiryT0.Add(5 * time.Second)) // at p2/a's time: expired
		check([]string{"p1/a", "p2/b", "p2/c", "p2/d", "p2/e"})
		clock.Set(expiryT0.Add(10 * time.Second))
		check([]string{"p2/b", "p2/c", "p2/d", "p2/e"})
		// Clearing the policy shows them again, as stored.
		tabletest.Must(t, tbl.ClearExpiry(ctx))
		check(all)
		tabletest.Must(t, tbl.SetExpiry(ctx, "ExpiresAt"))
		check([]string{"p2/b", "p2/c", "p2/d", "p2/e"})
		mustVerify(t, a)
	})
}

func cut(k string) (string, string, bool) {
	for i := range k {
		if k[i] == '/' {
			return k[:i], k[i+1:], true
		}
	}
	return k, "", false
}

func TestExpiryWrites(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		clock := tabletest.NewFakeClock(expiryT0)
		a, tbl := openExpiring(t, eng, clock, nil)
		var tags = map[string]localtable.ETag{}
		for _, rk := range []string{"a", "b", "c", "d", "e", "f"} {
			tag, err := tbl.Insert(ctx, expiringEntity("p", rk, expiryT0.Add(time.Second)))
			tabletest.Must(t, err)
			tags[rk] = tag
		}
		live, err := tbl.Insert(ctx, expiringEntity("p", "live", expiryT0.Add(time.Hour)))
		tabletest.Must(t, err)
		rev, err := a.Revision(ctx)
		tabletest.Must(t, err)
		clock.Set(expiryT0.Add(time.Second))

		notFound := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, localtable.ErrEntityNotFound) {
				t.Errorf("%s on an expired entity: %v; want ErrEntityNotFound", what, err)
			}
		}
		e := localtable.Entity{PartitionKey: "p", RowKey: "a", Properties: localtable.Properties{"M": localtable.Int32Value(2)}}
		_, err = tbl.Update(ctx, e, &localtable.UpdateOptions{IfMatch: localtable.ETagAny})
		notFound("Update *", err)
		_, err = tbl.Update(ctx, e, &localtable.UpdateOptions{IfMatch: tags["a"], Mode: localtable.UpdateModeMerge})
		notFound("Update (merge) with its ETag", err)
		notFound("Delete *", tbl.Delete(ctx, "p", "a", &localtable.DeleteOptions{IfMatch: localtable.ETagAny}))
		notFound("Delete with its ETag", tbl.Delete(ctx, "p", "a", &localtable.DeleteOptions{IfMatch: tags["a"]}))

		// An insert over it succeeds, as if it were absent.
		tag, err := tbl.Insert(ctx, e)
		tabletest.Must(t, err)
		if tag <= tags["a"] {
			t.Errorf("the insert's ETag %s is not after the expired entity's %s", tag, tags["a"])
		}
		got, err := tbl.Get(ctx, "p", "a", nil)
		tabletest.Must(t, err)
		if _, ok := got.Properties["ExpiresAt"]; ok || got.Properties["M"] != localtable.Int32Value(2) {
			t.Errorf("after an insert over an expired entity: %v; want its properties alone", got.Properties)
		}
		// An upsert (merge) is an insert: nothing of the expired one is merged.
		_, err = tbl.Upsert(ctx, e2("b"), &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})
		tabletest.Must(t, err)
		got, err = tbl.Get(ctx, "p", "b", nil)
		tabletest.Must(t, err)
		if len(got.Properties) != 1 {
			t.Errorf("upsert (merge) over an expired entity left %v; want M alone", got.Properties)
		}

		// Transactions: an update of an expired entity fails the whole
		// transaction at its index; inserts over expired entities and an
		// update of a live one commit together.
		_, err = tbl.Transact(ctx, []localtable.Action{
			{Type: localtable.ActionUpdateMerge, Entity: e2("live"), IfMatch: live},
			{Type: localtable.ActionDelete, Entity: e2("c"), IfMatch: localtable.ETagAny},
		})
		var te *localtable.TransactionError
		if !errors.As(err, &te) || te.Index != 1 || !errors.Is(err, localtable.ErrEntityNotFound) {
			t.Fatalf("transaction deleting an expired entity: %v; want ErrEntityNotFound at index 1", err)
		}
		_, err = tbl.Transact(ctx, []localtable.Action{
			{Type: localtable.ActionUpdateMerge, Entity: e2("live"), IfMatch: live},
			{Type: localtable.ActionInsert, Entity: e2("c")},
			{Type: localtable.ActionUpsertReplace, Entity: e2("d")},
		})
		tabletest.Must(t, err)

		// The feed: an insert over an expired entity is its Expired change,
		// then the Insert, in one commit.
		cs := collect(t, a, &localtable.WatchOptions{After: rev}, 8)
		var desc []string
		for _, c := range cs {
			desc = append(desc, fmt.Sprintf("%v %s %d", c.Kind, c.Entity.RowKey, c.Commit-rev))
		}
		want := []string{"Expired a 1", "Insert a 1", "Expired b 3", "Insert b 3", "Merge live 5", "Expired c 5", "Insert c 5", "Expired d 5"}
		if !slices.Equal(desc[:8], want) {
			t.Fatalf("feed = %q; want %q", desc, want)
		}
		mustVerify(t, a)
		// e and f are still stored, expired; the sweeper deletes them.
		n, err := a.SweepExpired(ctx)
		if err != nil || n != 2 {
			t.Fatalf("SweepExpired = %d, %v; want 2 (e and f)", n, err)
		}
		mustVerify(t, a)
	})
}

// e2 is the entity p/rk with M = 2.
func e2(rk string) localtable.Entity {
	return localtable.Entity{PartitionKey: "p", RowKey: rk, Properties: localtable.Properties{"M": localtable.Int32Value(2)}}
}

func TestExpirySweep(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		clock := tabletest.NewFakeClock(expiryT0)
		a, tbl := openExpiring(t, eng, clock, &localtable.Options{Expiry: &localtable.ExpiryOptions{Interval: -1, Batch: 3, PassLimit: 7}})
		const n = 20
		for i := range n {
			_, err := tbl.Insert(ctx, expiringEntity(fmt.Sprintf("p%d", i%3), fmt.Sprintf("r%02d", i), expiryT0.Add(time.Duration(i+1)*time.Second)))
			tabletest.Must(t, err)
		}
		_, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p0", RowKey: "forever"})
		tabletest.Must(t, err)
		rev, err := a.Revision(ctx)
		tabletest.Must(t, err)
		if k, err := a.SweepExpired(ctx); err != nil || k != 0 {
			t.Fatalf("SweepExpired before any expired = %d, %v", k, err)
		}
		clock.Set(expiryT0.Add(10 * time.Second)) // r00..r09 expired
		if k, err := a.SweepExpired(ctx); err != nil || k != 7 {
			t.Fatalf("first pass = %d, %v; want 7 (PassLimit)", k, err)
		}
		if k, err := a.SweepExpired(ctx); err != nil || k != 3 {
			t.Fatalf("second pass = %d, %v; want 3", k, err)
		}
		if k, err := a.SweepExpired(ctx); err != nil || k != 0 {
			t.Fatalf("third pass = %d, %v; want 0", k, err)
		}
		mustVerify(t, a)
		cs := collect(t, a, &localtable.WatchOptions{After: rev}, 10)
		seen := map[string]bool{}
		for _, c := range cs {
			if c.Kind != localtable.ChangeExpired || !c.Kind.IsEntity() || seen[c.Entity.RowKey] {
				t.Fatalf("change %v %s: want one Expired change per entity", c.Kind, c.Entity.RowKey)
			}
			seen[c.Entity.RowKey] = true
		}
		for i := range 10 {
			if !seen[fmt.Sprintf("r%02d", i)] {
				t.Errorf("r%02d has no Expired change", i)
			}
		}
		// The deleted entities stay deleted when the policy is cleared.
		tabletest.Must(t, tbl.ClearExpiry(ctx))
		if k, err := tbl.Count(ctx, nil); err != nil || k != n-10+1 {
			t.Fatalf("Count without the policy = %d, %v; want %d", k, err, n-10+1)
		}
		if k, err := a.SweepExpired(ctx); err != nil || k != 0 {
			t.Fatalf("a pass without a policy = %d, %v; want 0", k, err)
		}
	})
}

// TestExpirySweepVsRewrite: writers keep rewriting entities, some with an
// ExpiresAt in the past (expired at once) and some in the future, while
// sweepers run: at the end every entity whose last write made it live is
// there, with that write's ETag, and every one whose last write expired is
// gone after a final pass; the feed has one Expired change per deletion.
func TestExpirySweepVsRewrite(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		clock := tabletest.NewFakeClock(expiryT0.Add(time.Hour))
		var store *sharedmem.Store
		opts := &localtable.Options{Expiry: &localtable.ExpiryOptions{Interval: -1, Batch: 5}}
		if eng.Name == "shared" {
			store = sharedmem.New()
			opts.Engine = store.Open()
		}
		a, tbl := openExpiring(t, eng, clock, opts)
		sweepers := []*localtable.Account{a}
		if store != nil { // a second account over the same store sweeps too
			b, _ := openExpiring(t, eng, clock, &localtable.Options{Engine: store.Open(), Expiry: opts.Expiry})
			sweepers = append(sweepers, b)
		}
		const writers, keys, rounds = 4, 8, 40
		type last struct {
			tag  localtable.ETag
			live bool
		}
		lasts := make([][]last, writers)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := range writers {
			lasts[w] = make([]last, keys)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					for k := range keys {
						live := (r+k+w)%3 != 0
						at := expiryT0 // the past: expired at once
						if live {
							at = expiryT0.Add(48 * time.Hour)
						}
						tag, err := tbl.Upsert(ctx, expiringEntity(fmt.Sprintf("w%d", w), fmt.Sprintf("k%d", k), at), nil)
						if err != nil {
							t.Errorf("Upsert: %v", err)
							return
						}
						lasts[w][k] = last{tag, live}
					}
				}
			}()
		}
		var swg sync.WaitGroup
		for _, s := range sweepers {
			swg.Add(1)
			go func() {
				defer swg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.SweepExpired(ctx); err != nil {
						t.Errorf("SweepExpired: %v", err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(stop)
		swg.Wait()
		// A final pass: in each account, as the one holding the lease is
		// the one that sweeps.
		for _, s := range sweepers {
			if _, err := s.SweepExpired(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for w := range writers {
			for k := range keys {
				e, err := tbl.Get(ctx, fmt.Sprintf("w%d", w), fmt.Sprintf("k%d", k), nil)
				switch l := lasts[w][k]; {
				case l.live && (err != nil || e.ETag != l.tag):
					t.Errorf("w%d/k%d, last written live (%s): %v %s", w, k, l.tag, err, e.ETag)
				case !l.live && !errors.Is(err, localtable.ErrEntityNotFound):
					t.Errorf("w%d/k%d, last written expired: %v", w, k, err)
				}
			}
		}
		// Nothing expired is left stored: with the policy cleared, only the
		// live ones are there.
		tabletest.Must(t, tbl.ClearExpiry(ctx))
		live := 0
		for w := range writers {
			for k := range keys {
				if lasts[w][k].live {
					live++
				}
			}
		}
		if n, err := tbl.Count(ctx, nil); err != nil || n != live {
			t.Errorf("stored entities = %d, %v; want the %d live ones", n, err, live)
		}
		mustVerify(t, a)
		// Each Expired change follows a write of its entity: never two in a row.
		rev, err := a.Revision(ctx)
		tabletest.Must(t, err)
		lastKind := map[string]localtable.ChangeKind{}
		for c, err := range a.Watch(ctx, &localtable.WatchOptions{}) {
			tabletest.Must(t, err)
			if c.Kind.IsEntity() {
				k := c.Entity.PartitionKey + "/" + c.Entity.RowKey
				if c.Kind == localtable.ChangeExpired && lastKind[k] == localtable.ChangeExpired {
					t.Fatalf("%s expired twice in a row (revision %d): a double delete", k, c.Revision)
				}
				lastKind[k] = c.Kind
			}
			if c.Revision >= rev-1 {
				break
			}
		}
	})
}

// TestExpiryRestartMidSweep: a sweep cut short by a close (on pebble on
// disk) leaves the rest hidden; after the reopen the passes resume and
// delete each expired entity exactly once, as the feed shows.
func TestExpiryRestartMidSweep(t *testing.T) {
	ctx := context.Background()
	clock := tabletest.NewFakeClock(expiryT0)
	dir := t.TempDir()
	open := func() *localtable.Account {
		t.Helper()
		db, err := pebble.Open(dir, nil)
		tabletest.Must(t, err)
		a, err := localtable.Open(&localtable.Options{Engine: db, Clock: clock.Now, Feed: &localtable.FeedOptions{},
			Expiry: &localtable.ExpiryOptions{Interval: -1, PassLimit: 7}})
		tabletest.Must(t, err)
		return a
	}
	a := open()
	tbl, err := a.CreateTable(ctx, "ttl")
	tabletest.Must(t, err)
	tabletest.Must(t, tbl.SetExpiry(ctx, "ExpiresAt"))
	for i := range 30 {
		_, err := tbl.Insert(ctx, expiringEntity(fmt.Sprintf("p%d", i%2), fmt.Sprintf("r%02d", i), expiryT0.Add(time.Second)))
		tabletest.Must(t, err)
	}
	rev, err := a.Revision(ctx)
	tabletest.Must(t, err)
	clock.Set(expiryT0.Add(time.Minute))
	if n, err := a.SweepExpired(ctx); err != nil || n != 7 {
		t.Fatalf("SweepExpired = %d, %v; want 7", n, err)
	}
	tabletest.Must(t, a.Close())

	a = open()
	defer a.Close()
	tbl = a.Table("ttl")
	if p, err := tbl.Expiry(ctx); err != nil || p != "ExpiresAt" {
		t.Fatalf("Expiry after reopen = %q, %v", p, err)
	}
	if n, err := tbl.Count(ctx, nil); err != nil || n != 0 {
		t.Fatalf("Count after reopen = %d, %v; want 0", n, err)
	}
	total := 0
	for {
		n, err := a.SweepExpired(ctx)
		tabletest.Must(t, err)
		if n == 0 {
			break
		}
		total += n
	}
	if total != 23 {
		t.Fatalf("the passes after the reopen deleted %d; want 23", total)
	}
	seen := map[string]int{}
	for _, c := range collect(t, a, &localtable.WatchOptions{After: rev}, 30) {
		if c.Kind != localtable.ChangeExpired {
			t.Fatalf("change %v; want Expired", c.Kind)
		}
		seen[c.Entity.PartitionKey+"/"+c.Entity.RowKey]++
	}
	if len(seen) != 30 {
		t.Fatalf("%d entities expired in the feed; want 30 once each: %v", len(seen), seen)
	}
	mustVerify(t, a)
}

// TestExpiryBackgroundSweeper: with the default sweeper on, entities are
// deleted in the background once the clock passes their time, and Close
// stops it (no goroutine left).
func TestExpiryBackgroundSweeper(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		before := runtime.NumGoroutine()
		clock := tabletest.NewFakeClock(expiryT0)
		a, err := localtable.Open(&localtable.Options{Engine: eng.Open(t), Clock: clock.Now, Feed: &localtable.FeedOptions{},
			Expiry: &localtable.ExpiryOptions{Interval: 5 * time.Millisecond}})
		tabletest.Must(t, err)
		tbl, err := a.CreateTable(ctx, "ttl")
		tabletest.Must(t, err)
		tabletest.Must(t, tbl.SetExpiry(ctx, "ExpiresAt"))
		for i := range 5 {
			_, err := tbl.Insert(ctx, expiringEntity("p", fmt.Sprintf("r%d", i), expiryT0.Add(time.Second)))
			tabletest.Must(t, err)
		}
		rev, err := a.Revision(ctx)
		tabletest.Must(t, err)
		clock.Set(expiryT0.Add(time.Second))
		for _, c := range collect(t, a, &localtable.WatchOptions{After: rev}, 5) {
			if c.Kind != localtable.ChangeExpired {
				t.Fatalf("change %v; want Expired", c.Kind)
			}
		}
		tabletest.Must(t, a.Close())
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
		}
	})
}

func TestExpiryPolicy(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		if p, err := tbl.Expiry(ctx); err != nil || p != "" {
			t.Fatalf("Expiry of a new table = %q, %v", p, err)
		}
		for _, bad := range []string{"", "PartitionKey", "Timestamp", "1x", "a b"} {
			err := tbl.SetExpiry(ctx, bad)
			if !errors.Is(err, localtable.ErrInvalidInput) {
				t.Errorf("SetExpiry(%q): %v; want ErrInvalidInput", bad, err)
			}
			// One code, one prefix: the name's own error is quoted, not nested.
			if err != nil && strings.Count(err.Error(), "localtable:") != 1 {
				t.Errorf("SetExpiry(%q): %q nests an error", bad, err)
			}
		}
		if err := a.Table("nope").SetExpiry(ctx, "At"); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("SetExpiry on a missing table: %v", err)
		}
		// An index led by the property is reused; none: one is declared.
		tabletest.Must(t, tbl.CreateIndex(ctx, "byAt", "At", "N"))
		tabletest.Must(t, tbl.SetExpiry(ctx, "At"))
		xs, err := tbl.Indexes(ctx)
		tabletest.Must(t, err)
		if len(xs) != 1 {
			t.Fatalf("indexes after SetExpiry on an indexed property = %v; want byAt alone", xs)
		}
		if err := tbl.DropIndex(ctx, "byAt"); !errors.Is(err, localtable.ErrInvalidInput) {
			t.Errorf("DropIndex of the expiry's index: %v; want ErrInvalidInput", err)
		}
		tabletest.Must(t, tbl.SetExpiry(ctx, "Other"))
		xs, err = tbl.Indexes(ctx)
		tabletest.Must(t, err)
		if len(xs) != 2 || xs[1].Name != "expiry_Other" || !xs[1].Ready {
			t.Fatalf("indexes after SetExpiry(Other) = %v; want byAt and expiry_Other", xs)
		}
		tabletest.Must(t, tbl.DropIndex(ctx, "byAt")) // no longer the expiry's
		tabletest.Must(t, tbl.ClearExpiry(ctx))       // drops expiry_Other, the policy's own
		tabletest.Must(t, tbl.ClearExpiry(ctx))       // none: no-op
		if err := tbl.DropIndex(ctx, "expiry_Other"); !errors.Is(err, localtable.ErrIndexNotFound) {
			t.Errorf("DropIndex of the index ClearExpiry dropped: %v; want ErrIndexNotFound", err)
		}
		mustVerify(t, a)
	})
}

// TestExpiryPolicyIndexFollowsPolicy: the index SetExpiry declares for a
// policy is dropped, with its entries, when the policy moves to another
// property or is cleared; an index the table declared itself stays; the
// policy's index claimed by CreateIndex under its name stays too; and the
// mark survives a restart (pebble reopened).
func TestExpiryPolicyIndexFollowsPolicy(t *testing.T) {
	ctx := context.Background()
	names := func(t *testing.T, tbl *localtable.Table) []string {
		t.Helper()
		xs, err := tbl.Indexes(ctx)
		tabletest.Must(t, err)
		var out []string
		for _, x := range xs {
			out = append(out, x.Name)
		}
		return out
	}
	check := func(t *testing.T, tbl *localtable.Table, what string, want ...string) {
		t.Helper()
		if got := names(t, tbl); !slices.Equal(got, want) {
			t.Fatalf("indexes after %s = %v; want %v", what, got, want)
		}
	}
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		for i := range 20 {
			_, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%02d", i), Properties: localtable.Properties{
				"At": localtable.DateTimeValue(expiryT0), "Until": localtable.DateTimeValue(expiryT0), "Other": localtable.Int32Value(int32(i)),
			}})
			tabletest.Must(t, err)
		}
		tabletest.Must(t, tbl.CreateIndex(ctx, "byUntil", "Until"))
		tabletest.Must(t, tbl.SetExpiry(ctx, "At"))
		check(t, tbl, "SetExpiry(At)", "byUntil", "expiry_At")
		tabletest.Must(t, tbl.SetExpiry(ctx, "Until")) // the table's own byUntil serves
		check(t, tbl, "SetExpiry(Until)", "byUntil")
		mustVerify(t, a) // expiry_At's entries went with it
		tabletest.Must(t, tbl.SetExpiry(ctx, "At"))
		tabletest.Must(t, tbl.ClearExpiry(ctx))
		check(t, tbl, "ClearExpiry", "byUntil")
		mustVerify(t, a)
		// A policy on the table's own index leaves it.
		tabletest.Must(t, tbl.SetExpiry(ctx, "Until"))
		tabletest.Must(t, tbl.ClearExpiry(ctx))
		check(t, tbl, "ClearExpiry of a policy on byUntil", "byUntil")
		// The policy's index claimed by its name (in another case) stays.
		tabletest.Must(t, tbl.SetExpiry(ctx, "At"))
		tabletest.Must(t, tbl.CreateIndex(ctx, "Expiry_At", "At"))
		tabletest.Must(t, tbl.ClearExpiry(ctx))
		check(t, tbl, "ClearExpiry after CreateIndex claimed expiry_At", "byUntil", "expiry_At")
		mustVerify(t, a)
	})

	t.Run("restart", func(t *testing.T) {
		dir := t.TempDir()
		open := func() *localtable.Account {
			t.Helper()
			db, err := pebble.Open(dir, nil)
			tabletest.Must(t, err)
			a, err := localtable.Open(&localtable.Options{Engine: db, Expiry: &localtable.ExpiryOptions{Interval: -1}})
			tabletest.Must(t, err)
			return a
		}
		a := open()
		tbl, err := a.CreateTable(ctx, "ttl")
		tabletest.Must(t, err)
		tabletest.Must(t, tbl.SetExpiry(ctx, "At"))
		tabletest.Must(t, a.Close())
		a = open()
		defer a.Close()
		tbl = a.Table("ttl")
		check(t, tbl, "reopening", "expiry_At")
		tabletest.Must(t, tbl.ClearExpiry(ctx))
		check(t, tbl, "ClearExpiry after reopening")
		mustVerify(t, a)
	})
}

// TestExpiryFullTransactionOverExpired: a transaction of 100 inserts over
// 100 expired entities is one feed record of 200 changes (each Expired
// then Insert), which watchers read back whole.
func TestExpiryFullTransactionOverExpired(t *testing.T) {
	ctx := context.Background()
	clock := tabletest.NewFakeClock(expiryT0)
	a, tbl := openExpiring(t, tabletest.Engines[0], clock, nil)
	var acts []localtable.Action
	for i := range localtable.MaxTransactionActions {
		e := expiringEntity("p", fmt.Sprintf("r%03d", i), expiryT0.Add(time.Second))
		_, err := tbl.Insert(ctx, e)
		tabletest.Must(t, err)
		e.Properties = localtable.Properties{"N": localtable.Int32Value(2)}
		acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: e})
	}
	clock.Set(expiryT0.Add(time.Second))
	rev, err := a.Revision(ctx)
	tabletest.Must(t, err)
	_, err = tbl.Transact(ctx, acts)
	tabletest.Must(t, err)
	cs := collect(t, a, &localtable.WatchOptions{After: rev}, 2*localtable.MaxTransactionActions)
	for i, c := range cs {
		want := localtable.ChangeExpired
		if i%2 == 1 {
			want = localtable.ChangeInsert
		}
		if c.Kind != want || c.Commit != rev+1 || c.Last != (i == len(cs)-1) || c.Entity.RowKey != fmt.Sprintf("r%03d", i/2) {
			t.Fatalf("change %d: %v %s commit %d last %v; want %v of r%03d in commit %d", i, c.Kind, c.Entity.RowKey, c.Commit, c.Last, want, i/2, rev+1)
		}
	}
	mustVerify(t, a)
}

// TestExpiryCheckpointRestore: a checkpoint holds the table's policy with
// its data: Restore brings back the policy that was cleared since, and the
// entities it hides stay hidden.
func TestExpiryCheckpointRestore(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		clock := tabletest.NewFakeClock(expiryT0)
		a, tbl := openExpiring(t, eng, clock, nil)
		_, err := tbl.Insert(ctx, expiringEntity("p", "a", expiryT0.Add(time.Second)))
		tabletest.Must(t, err)
		cp, err := a.Checkpoint(ctx)
		tabletest.Must(t, err)
		defer cp.Close()
		tabletest.Must(t, tbl.ClearExpiry(ctx))
		clock.Set(expiryT0.Add(time.Second))
		if _, err := tbl.Get(ctx, "p", "a", nil); err != nil {
			t.Fatalf("Get without the policy: %v", err)
		}
		tabletest.Must(t, a.Restore(ctx, cp))
		if p, err := tbl.Expiry(ctx); err != nil || p != "ExpiresAt" {
			t.Fatalf("Expiry after Restore = %q, %v", p, err)
		}
		if _, err := tbl.Get(ctx, "p", "a", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
			t.Fatalf("Get of an expired entity after Restore: %v", err)
		}
		if n, err := a.SweepExpired(ctx); err != nil || n != 1 {
			t.Fatalf("SweepExpired after Restore = %d, %v; want 1", n, err)
		}
	})
}
