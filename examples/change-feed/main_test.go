package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/localtable/localtable"
)

// want is the program's whole output: the data is fixed, and each write
// waits for the watcher, so the revisions are too.
const want = `Tables Orders (source) and CustomerTotals (view) in pebble, feed on; the watcher starts at revision 2.

A transaction inserts three orders in region east, then one in west:
  [watcher] rev 3 Insert east/1001: ada +1 order +25.00 (3 writes, 1 transaction)
  [watcher] rev 4 Insert east/1002: bob +1 order +10.00 (3 writes, 1 transaction)
  [watcher] rev 5 Insert east/1003: ada +1 order +5.00 (3 writes, 1 transaction)
  [watcher] rev 15 Insert west/2001: cy +1 order +40.00 (3 writes, 1 transaction)
  view at revision 15: ada 2 orders 30.00; bob 1 order 10.00; cy 1 order 40.00
  (the revisions skipped are the view's own writes: the feed has them too, and the watcher passes over them)

Order east/1002 is replaced: it now belongs to ada, for 12.00 (it moves between customers):
  [watcher] rev 19 Replace east/1002: bob -1 order -10.00, ada +1 order +12.00 (4 writes, 1 transaction)
  view at revision 19: ada 3 orders 42.00; cy 1 order 40.00

A merge raises west/2001 to 45.00:
  [watcher] rev 24 Merge west/2001: cy +5.00 (3 writes, 1 transaction)
  view at revision 24: ada 3 orders 42.00; cy 1 order 45.00

A transaction inserting east/1004 and east/1001 again fails at action 1 (EntityAlreadyExists): the revision stays 27, the view never sees 1004:
  view at revision 24: ada 3 orders 42.00; cy 1 order 45.00

Order east/1003 is deleted:
  [watcher] rev 28 Delete east/1003: ada -1 order -5.00 (3 writes, 1 transaction)
  view at revision 28: ada 2 orders 37.00; cy 1 order 45.00

The watcher is stopped, the store closed and reopened; its checkpoint is revision 28.
While it is down, west/2002 is inserted for bob and east/1001 moves to cy:
  view at revision 28: ada 2 orders 37.00; cy 1 order 45.00
Restarted, the watcher reads the feed after revision 28:
  [watcher] rev 32 Insert west/2002: bob +1 order +7.50 (3 writes, 1 transaction)
  [watcher] rev 33 Replace east/1001: ada -1 order -25.00, cy +1 order +25.00 (4 writes, 1 transaction)
  view at revision 33: ada 1 order 12.00; bob 1 order 7.50; cy 2 orders 70.00

The view equals a recomputation from Orders: 3 customers, 4 orders, checkpoint at revision 33.
`

func TestRun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(ctx, dir, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}

	// The final state, read back from the reopened store independently
	// of the program's own check.
	acct, err := openAccount(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	v, err := readView(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tt := range v.totals {
		got = append(got, fmt.Sprintf("%s %d %d r%d", tt.Customer, tt.Orders, tt.Cents, tt.Revision))
	}
	if w := []string{"ada 1 1200 r33", "bob 1 750 r32", "cy 2 7000 r33"}; !slices.Equal(got, w) {
		t.Errorf("totals %q, want %q", got, w)
	}
	if v.checkpoint != 33 || len(v.lines) != 4 {
		t.Errorf("checkpoint %d, %d lines; want 33, 4", v.checkpoint, len(v.lines))
	}
	if _, err := acct.Table(sourceTable).Get(ctx, "east", "1004", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
		t.Errorf("east/1004 of the failed transaction: %v", err)
	}
}

// The crash test's workload: source writes in three phases. Phase 1 is
// written before the watcher starts, phase 2 while it runs (and crashes),
// phase 3 after its restart. Every write but the failing transaction is
// one change of Orders.
var (
	phase1 = []func(context.Context, *localtable.Table) error{
		func(ctx context.Context, o *localtable.Table) error {
			return insertAll(ctx, o, order("east", "1001", "ada", 2500), order("east", "1002", "bob", 1000), order("east", "1003", "ada", 500))
		},
		func(ctx context.Context, o *localtable.Table) error {
			return insertAll(ctx, o, order("west", "2001", "cy", 4000))
		},
	}
	phase2 = []func(context.Context, *localtable.Table) error{
		func(ctx context.Context, o *localtable.Table) error { // a move
			_, err := o.Update(ctx, order("east", "1002", "ada", 1200), nil)
			return err
		},
		func(ctx context.Context, o *localtable.Table) error {
			e := localtable.Entity{PartitionKey: "west", RowKey: "2001"}
			e.Set("Cents", localtable.Int64Value(4500))
			_, err := o.Update(ctx, e, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge})
			return err
		},
		func(ctx context.Context, o *localtable.Table) error { // fails: nothing in the feed
			err := insertAll(ctx, o, order("east", "1004", "bob", 9900), order("east", "1001", "bob", 100))
			if !errors.Is(err, localtable.ErrEntityExists) {
				return fmt.Errorf("the failing transaction: %v", err)
			}
			return nil
		},
		func(ctx context.Context, o *localtable.Table) error { return o.Delete(ctx, "east", "1003", nil) },
		func(ctx context.Context, o *localtable.Table) error {
			return insertAll(ctx, o, order("east", "1005", "bob", 300))
		},
		func(ctx context.Context, o *localtable.Table) error { // a move back and forth
			_, err := o.Update(ctx, order("west", "2001", "bob", 4500), nil)
			return err
		},
	}
	phase3 = []func(context.Context, *localtable.Table) error{
		func(ctx context.Context, o *localtable.Table) error {
			return insertAll(ctx, o, order("west", "2002", "cy", 750))
		},
		func(ctx context.Context, o *localtable.Table) error { return o.Delete(ctx, "east", "1001", nil) },
		func(ctx context.Context, o *localtable.Table) error {
			_, err := o.Update(ctx, order("east", "1002", "cy", 1200), nil)
			return err
		},
	}
)

// changesBeforeCrash is how many changes of Orders phases 1 and 2 make.
const changesBeforeCrash = 4 + 5

var errCrash = errors.New("crashed")

func writeAll(t *testing.T, ctx context.Context, acct *localtable.Account, writes []func(context.Context, *localtable.Table) error) {
	t.Helper()
	for _, f := range writes {
		if err := f(ctx, acct.Table(sourceTable)); err != nil {
			t.Fatal(err)
		}
	}
}

// sourceChanges reads the feed's entity changes of Orders, up to the
// account's revision now.
func sourceChanges(t *testing.T, acct *localtable.Account) []localtable.Change {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	target, err := acct.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []localtable.Change
	for c, err := range acct.Watch(ctx, &localtable.WatchOptions{After: 0}) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.EqualFold(c.Table, sourceTable) && c.Kind != localtable.ChangeTableCreated {
			out = append(out, c)
		}
		if c.Revision >= target {
			break
		}
	}
	return out
}

// replay applies changes to totals in memory, from nothing: what the view
// must hold after exactly these changes, each once.
func replay(changes []localtable.Change) []string {
	type line struct {
		customer string
		cents    int64
	}
	lines := map[string]line{}
	for _, c := range changes {
		k := c.Entity.PartitionKey + "/" + c.Entity.RowKey
		if c.Kind == localtable.ChangeDelete {
			delete(lines, k)
			continue
		}
		lines[k] = line{c.Entity.Properties["Customer"].String(), c.Entity.Properties["Cents"].Int64()}
	}
	totals := map[string][2]int64{}
	for _, l := range lines {
		t := totals[l.customer]
		totals[l.customer] = [2]int64{t[0] + 1, t[1] + l.cents}
	}
	var out []string
	for c, t := range totals {
		out = append(out, fmt.Sprintf("%s %d %d", c, t[0], t[1]))
	}
	slices.Sort(out)
	return out
}

// stored is the view's totals as stored, in replay's form.
func stored(t *testing.T, acct *localtable.Account) ([]string, int64) {
	t.Helper()
	v, err := readView(context.Background(), acct)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tt := range v.totals {
		out = append(out, fmt.Sprintf("%s %d %d", tt.Customer, tt.Orders, tt.Cents))
	}
	slices.Sort(out)
	return out, v.checkpoint
}

// The watcher is crashed at its k-th change, for every k, just before the
// change's transaction commits and just after; its context is cancelled
// and the pebble store closed under it, with writes going on. Reopened,
// the view holds exactly the changes committed before the crash, each
// once, and the checkpoint names the last of them; restarted from that
// checkpoint, the watcher applies exactly the changes after it, and the
// view equals a recomputation from Orders. Counts and sums are not
// idempotent: a change applied twice, or lost, would show in them.
func TestCrashAtEveryChange(t *testing.T) {
	for _, at := range []point{beforeCommit, applied} {
		for k := 1; k <= changesBeforeCrash; k++ {
			t.Run(fmt.Sprintf("%s/%d", strings.ReplaceAll(at.String(), " ", "-"), k), func(t *testing.T) {
				crashAt(t, at, k)
			})
		}
	}
}

func crashAt(t *testing.T, at point, k int) {
	ctx := context.Background()
	dir := t.TempDir()
	acct, err := openAccount(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{sourceTable, viewTable} {
		if _, err := acct.CreateTable(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	writeAll(t, ctx, acct, phase1)

	// The first watcher, crashed at its k-th change.
	var first []localtable.Revision // what it committed
	n := 0
	w := &watcher{acct: acct, hook: func(p point, c localtable.Change) error {
		if p == applied {
			first = append(first, c.Revision)
		}
		if p == beforeCommit {
			n++
		}
		if p == at && n == k {
			return errCrash
		}
		return nil
	}}
	r := w.start(ctx)
	writeAll(t, ctx, acct, phase2) // concurrently with the watcher
	<-r.done                       // it reaches the k-th change whatever the timing: the changes are in the feed
	if !errors.Is(r.err, errCrash) {
		t.Fatalf("watcher: %v", r.err)
	}
	r.cancel()
	all := sourceChanges(t, acct)
	if len(all) != changesBeforeCrash {
		t.Fatalf("%d changes of Orders, want %d", len(all), changesBeforeCrash)
	}
	if err := acct.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopened: exactly the first changes committed, each once.
	acct, err = openAccount(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	committed := k
	if at == beforeCommit {
		committed = k - 1
	}
	if len(first) != committed {
		t.Fatalf("the first watcher committed %d changes, want %d", len(first), committed)
	}
	totals, cp := stored(t, acct)
	if w := replay(all[:committed]); !slices.Equal(totals, w) {
		t.Fatalf("after the crash the view holds %q; %d changes applied once give %q", totals, committed, w)
	}
	wantCP := int64(0)
	if committed > 0 {
		wantCP = int64(all[committed-1].Revision)
	}
	if cp != wantCP {
		t.Fatalf("checkpoint %d, want %d", cp, wantCP)
	}

	// Restarted from its checkpoint, with more writes while it runs.
	var second []localtable.Revision
	w = &watcher{acct: acct, hook: func(p point, c localtable.Change) error {
		if p == applied {
			second = append(second, c.Revision)
		}
		return nil
	}}
	r = w.start(ctx)
	writeAll(t, ctx, acct, phase3)
	if err := r.caughtUp(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := check(ctx, acct); err != nil {
		t.Fatal(err)
	}
	all = sourceChanges(t, acct)
	var want []localtable.Revision
	for _, c := range all {
		want = append(want, c.Revision)
	}
	if got := append(first, second...); !slices.Equal(got, want) {
		t.Fatalf("changes applied: %v then %v; want each of %v once, in order", first, second, want)
	}
	totals, _ = stored(t, acct)
	if w := replay(all); !slices.Equal(totals, w) {
		t.Fatalf("view %q, replay %q", totals, w)
	}
}

// A change delivered again (a watcher resumed from an older revision) is
// skipped: the checkpoint, stored with the view, says it is applied.
func TestRedeliverySkipped(t *testing.T) {
	ctx := context.Background()
	acct, err := openAccount(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	for _, name := range []string{sourceTable, viewTable} {
		if _, err := acct.CreateTable(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	writeAll(t, ctx, acct, phase1)
	r := (&watcher{acct: acct}).start(ctx)
	if err := r.caughtUp(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	before, _ := stored(t, acct)
	var log bytes.Buffer
	w := &watcher{acct: acct, log: &log}
	for _, c := range sourceChanges(t, acct) {
		if wrote, err := w.apply(ctx, acct.Table(viewTable), c); err != nil || wrote {
			t.Fatalf("redelivered %d: wrote %v, %v", c.Revision, wrote, err)
		}
	}
	if after, _ := stored(t, acct); !slices.Equal(after, before) {
		t.Fatalf("view %q after redelivery, was %q", after, before)
	}
	if !strings.Contains(log.String(), "rev 3 already applied (checkpoint 6): skipped") {
		t.Fatalf("log:\n%s", &log)
	}
}

// Two watchers running at once by mistake: the ETag conditions make one
// of them fail rather than apply a change twice. A fresh watcher then
// finishes the work; every change was committed exactly once, and the
// view is exact.
func TestTwoWatchers(t *testing.T) {
	ctx := context.Background()
	acct, err := openAccount(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	for _, name := range []string{sourceTable, viewTable} {
		if _, err := acct.CreateTable(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var committed []localtable.Revision
	hook := func(p point, c localtable.Change) error {
		if p == applied {
			mu.Lock()
			committed = append(committed, c.Revision)
			mu.Unlock()
		}
		return nil
	}
	conflict := func(err error) bool {
		return errors.Is(err, localtable.ErrConditionNotMet) || errors.Is(err, localtable.ErrEntityExists) || errors.Is(err, localtable.ErrEntityNotFound)
	}
	a := (&watcher{acct: acct, hook: hook}).start(ctx)
	b := (&watcher{acct: acct, hook: hook}).start(ctx)
	writeAll(t, ctx, acct, phase1)
	writeAll(t, ctx, acct, phase2)
	writeAll(t, ctx, acct, phase3)
	for _, r := range []*running{a, b} {
		if err := r.caughtUp(ctx); err != nil && !conflict(r.err) {
			t.Fatal(err)
		}
		if err := r.stop(); err != nil && !conflict(err) {
			t.Fatalf("watcher: %v", err)
		}
	}
	c := (&watcher{acct: acct, hook: hook}).start(ctx)
	if err := c.caughtUp(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := check(ctx, acct); err != nil {
		t.Fatal(err)
	}
	var want []localtable.Revision
	for _, c := range sourceChanges(t, acct) {
		want = append(want, c.Revision)
	}
	slices.Sort(committed)
	if !slices.Equal(committed, want) {
		t.Fatalf("committed %v; want each of %v once", committed, want)
	}
}
