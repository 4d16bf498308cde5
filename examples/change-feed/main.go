// Command change-feed keeps a materialized view up to date with a watcher
// on the account's change feed (Account.Watch) instead of a queue.
//
// The source is the table Orders: an order is keyed by region
// (PartitionKey) and order ID (RowKey) and names its Customer and amount
// in Cents. The view is the table CustomerTotals: per customer, how many
// orders and how much in all. Only the watcher writes the view. It reads
// the feed from its checkpoint, the last revision it applied, and applies
// each change of Orders: an insert adds the order to its customer's
// totals; a replace or merge that changes the customer moves the order
// from one customer's totals to another's; a delete takes it away. A
// failed transaction puts nothing in the feed, so nothing of it reaches
// the view.
//
// The point is exactly-once effect across crashes. Order counts and sums
// are not idempotent: adding an order twice counts it twice. A watcher
// that wrote the view and then, in a separate write, its checkpoint would
// apply the change again if it crashed between the two; one that saved
// the checkpoint first would lose the change. So here the checkpoint is an
// entity of the view, in the view's one partition ("view"), and every
// change is applied as ONE entity group transaction: the totals of the
// customers it touches, the view's copy of the order (the feed gives a
// deleted entity's keys only, and a replace only the new version, so the
// watcher keeps what each order contributed in order to take it back),
// and the checkpoint, moved to the change's revision. Each write is
// conditioned on the ETag read, and a change at or below the stored
// checkpoint is skipped. A crash before the commit leaves nothing; after
// it, everything, and the restarted watcher resumes after that revision:
// each change takes effect once, whenever the watcher dies. A second
// watcher running by mistake fails on the ETags instead of counting twice.
//
// The choice has a price: the whole view is one partition, so the view's
// write rate is that of one partition (on Azure about 2,000 entities a
// second). A view too large or too busy for one partition cannot share a
// transaction with a single checkpoint; it would store on each view entity
// the revision that last changed it and skip a change whose revision is
// not above it, keeping the checkpoint only as a place to resume from
// (written after the view, losing nothing if it lags). That makes an
// overwrite idempotent, but a delta spread over entities in several
// partitions, like moving an order between two customers, is then not
// atomic: readers could see it half applied.
//
// The watcher reads the whole feed, skipping other tables' changes (its
// own view writes among them), so it knows how far it has read: the
// program waits for it to reach the account's revision before printing
// the view. A transaction's changes are applied one by one, so the view
// may briefly show part of a source transaction; each change's
// transaction is whole.
//
// What the program proves: the view follows inserts, an update that moves
// an order to another customer, a merge, a delete, and ignores a failed
// transaction; a watcher stopped (and the pebble store closed and
// reopened) while writes go on resumes from its checkpoint and applies
// exactly the changes it missed; and at the end the view equals a
// recomputation from Orders. The test crashes the watcher at every
// change, just before its transaction commits and just after, closes and
// reopens the store, and shows that the view then holds exactly the
// changes committed, each once, and that the restarted watcher converges.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage/pebble"
)

func main() {
	dir, err := os.MkdirTemp("", "change-feed-*")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := run(context.Background(), dir, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// The tables and the view's layout.
const (
	sourceTable  = "Orders"
	viewTable    = "CustomerTotals"
	viewPK       = "view"       // the view's one partition
	checkpointRK = "checkpoint" // the watcher's checkpoint, in it
)

// Order is an entity of the source table.
type Order struct {
	PartitionKey string // the region: "east", "west"
	RowKey       string // the order ID
	Customer     string
	Cents        int64
}

// Totals is a customer's entity of the view.
type Totals struct {
	PartitionKey string // viewPK
	RowKey       string // customerKey(Customer)
	Customer     string
	Orders       int64 // how many orders
	Cents        int64 // their sum
	Revision     int64 // the change that last changed it
}

// Line is the view's copy of what an order contributes to its customer's
// totals: what a replace or delete must take back.
type Line struct {
	PartitionKey string // viewPK
	RowKey       string // lineKey(region, order ID)
	Customer     string
	Cents        int64
	Revision     int64 // the change that wrote it
}

// Checkpoint is the last revision the watcher applied.
type Checkpoint struct {
	PartitionKey string // viewPK
	RowKey       string // checkpointRK
	Revision     int64
}

func customerKey(c string) string         { return localtable.CompoundKey("customer", c) }
func lineKey(region, order string) string { return localtable.CompoundKey("line", region, order) }
func cents(c int64) string                { return fmt.Sprintf("%d.%02d", c/100, c%100) }
func signedCents(c int64) string {
	if c < 0 {
		return "-" + cents(-c)
	}
	return "+" + cents(c)
}

// openAccount opens the pebble store in dir with the feed on.
func openAccount(dir string) (*localtable.Account, error) {
	db, err := pebble.Open(dir, nil)
	if err != nil {
		return nil, err
	}
	acct, err := localtable.Open(&localtable.Options{Engine: db, Feed: &localtable.FeedOptions{}})
	if err != nil {
		db.Close()
		return nil, err
	}
	return acct, nil
}

// get reads an entity of the view into a T; ok is false if it is absent.
func get[T any](ctx context.Context, view *localtable.Table, rk string) (v T, tag localtable.ETag, ok bool, err error) {
	e, err := view.Get(ctx, viewPK, rk, nil)
	if errors.Is(err, localtable.ErrEntityNotFound) {
		return v, "", false, nil
	}
	if err != nil {
		return v, "", false, err
	}
	return v, e.ETag, true, localtable.Unmarshal(e, &v)
}

// readCheckpoint returns the stored checkpoint (0 if there is none).
func readCheckpoint(ctx context.Context, view *localtable.Table) (localtable.Revision, localtable.ETag, bool, error) {
	cp, tag, ok, err := get[Checkpoint](ctx, view, checkpointRK)
	return localtable.Revision(cp.Revision), tag, ok, err
}

// watcher maintains the view from the feed.
type watcher struct {
	acct *localtable.Account
	log  io.Writer // what it applies; nil: nothing
	// hook, if set, runs just before each change's transaction commits
	// and just after; an error stops the watcher at once. Tests crash it
	// there.
	hook func(point, localtable.Change) error

	mu       sync.Mutex
	seen     localtable.Revision // how far it has read the feed
	progress chan struct{}       // closed when seen moves
}

func (w *watcher) logf(format string, args ...any) {
	if w.log != nil {
		fmt.Fprintf(w.log, "  [watcher] "+format+"\n", args...)
	}
}

func (w *watcher) setSeen(r localtable.Revision) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = r
	if w.progress != nil {
		close(w.progress)
	}
	w.progress = make(chan struct{})
}

func (w *watcher) position() (localtable.Revision, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.progress == nil {
		w.progress = make(chan struct{})
	}
	return w.seen, w.progress
}

// run applies the feed's changes from the stored checkpoint on, until ctx
// ends (it then returns ctx.Err()) or an error.
func (w *watcher) run(ctx context.Context) error {
	view := w.acct.Table(viewTable)
	from, _, _, err := readCheckpoint(ctx, view)
	if err != nil {
		return err
	}
	w.setSeen(from)
	for c, err := range w.acct.Watch(ctx, &localtable.WatchOptions{After: from}) {
		if err != nil {
			return err // a *FeedCompactedError would call for a rebuild
		}
		if c.Kind == localtable.ChangeRestored {
			// The view, its checkpoint included, was restored with the rest.
			return fmt.Errorf("revision %d: the account was restored: rebuild the view", c.Revision)
		}
		if strings.EqualFold(c.Table, sourceTable) {
			wrote, err := w.apply(ctx, view, c)
			if err != nil {
				return err
			}
			if wrote && w.hook != nil {
				if err := w.hook(applied, c); err != nil {
					return err
				}
			}
		}
		w.setSeen(c.Revision)
	}
	return ctx.Err()
}

// point is where a watcher's hook runs.
type point int

const (
	beforeCommit point = iota // the view read, the transaction built
	applied                   // the transaction committed
)

func (p point) String() string { return [...]string{"before commit", "after commit"}[p] }

// delta is a change to one customer's totals.
type delta struct {
	customer      string
	orders, cents int64
}

// apply applies one change of the source table to the view, with the
// checkpoint, in one transaction. It reports whether it wrote anything.
func (w *watcher) apply(ctx context.Context, view *localtable.Table, c localtable.Change) (bool, error) {
	switch c.Kind {
	case localtable.ChangeTableCreated:
		return false, nil
	case localtable.ChangeTableDeleted:
		return false, fmt.Errorf("revision %d: table %s deleted: rebuild the view", c.Revision, c.Table)
	}
	cp, cpTag, hasCP, err := readCheckpoint(ctx, view)
	if err != nil {
		return false, err
	}
	if c.Revision <= cp {
		w.logf("rev %d already applied (checkpoint %d): skipped", c.Revision, cp)
		return false, nil
	}
	rev := int64(c.Revision)
	region, id := c.Entity.PartitionKey, c.Entity.RowKey

	// What the order contributed before, and what it contributes now.
	old, oldTag, hadOld, err := get[Line](ctx, view, lineKey(region, id))
	if err != nil {
		return false, err
	}
	var now Order
	hasNow := false
	if c.Kind != localtable.ChangeDelete {
		if err := localtable.Unmarshal(c.Entity, &now); err != nil {
			return false, fmt.Errorf("revision %d: %w", c.Revision, err)
		}
		hasNow = now.Customer != ""
	}
	var deltas []delta
	add := func(customer string, orders, cents int64) {
		for i := range deltas {
			if deltas[i].customer == customer {
				deltas[i].orders += orders
				deltas[i].cents += cents
				return
			}
		}
		deltas = append(deltas, delta{customer, orders, cents})
	}
	if hadOld {
		add(old.Customer, -1, -old.Cents)
	}
	if hasNow {
		add(now.Customer, 1, now.Cents)
	}

	var actions []localtable.Action
	put := func(typ localtable.ActionType, v any, tag localtable.ETag) error {
		e, err := localtable.Marshal(v)
		if err != nil {
			return err
		}
		actions = append(actions, localtable.Action{Type: typ, Entity: e, IfMatch: tag})
		return nil
	}
	del := func(rk string, tag localtable.ETag) {
		actions = append(actions, localtable.Action{Type: localtable.ActionDelete,
			Entity: localtable.Entity{PartitionKey: viewPK, RowKey: rk}, IfMatch: tag})
	}
	var said []string
	for _, d := range deltas {
		if d.orders == 0 && d.cents == 0 {
			continue
		}
		t, tag, ok, err := get[Totals](ctx, view, customerKey(d.customer))
		if err != nil {
			return false, err
		}
		t.PartitionKey, t.RowKey, t.Customer = viewPK, customerKey(d.customer), d.customer
		t.Orders += d.orders
		t.Cents += d.cents
		t.Revision = rev
		switch {
		case t.Orders < 0 || (t.Orders == 0 && ok && t.Cents != 0):
			return false, fmt.Errorf("revision %d: customer %s would have %d orders, %s", c.Revision, d.customer, t.Orders, cents(t.Cents))
		case t.Orders == 0:
			del(t.RowKey, tag)
		case ok:
			err = put(localtable.ActionUpdateReplace, t, tag)
		default:
			err = put(localtable.ActionInsert, t, "")
		}
		if err != nil {
			return false, err
		}
		s := d.customer
		if d.orders != 0 {
			s += fmt.Sprintf(" %+d order", d.orders)
		}
		said = append(said, s+" "+signedCents(d.cents))
	}
	line := Line{PartitionKey: viewPK, RowKey: lineKey(region, id), Customer: now.Customer, Cents: now.Cents, Revision: rev}
	switch {
	case hasNow && hadOld:
		err = put(localtable.ActionUpdateReplace, line, oldTag)
	case hasNow:
		err = put(localtable.ActionInsert, line, "")
	case hadOld:
		del(line.RowKey, oldTag)
	}
	if err != nil {
		return false, err
	}
	next := Checkpoint{PartitionKey: viewPK, RowKey: checkpointRK, Revision: rev}
	if hasCP {
		err = put(localtable.ActionUpdateReplace, next, cpTag)
	} else {
		err = put(localtable.ActionInsert, next, "")
	}
	if err != nil {
		return false, err
	}
	if w.hook != nil {
		if err := w.hook(beforeCommit, c); err != nil {
			return false, err
		}
	}
	if _, err := view.Transact(ctx, actions); err != nil {
		return false, fmt.Errorf("revision %d: %w", c.Revision, err)
	}
	if len(said) == 0 {
		said = []string{"no change to the totals"}
	}
	w.logf("rev %d %s %s/%s: %s (%d writes, 1 transaction)", c.Revision, c.Kind, region, id, strings.Join(said, ", "), len(actions))
	return true, nil
}

// running is a watcher started in its own goroutine.
type running struct {
	w      *watcher
	cancel context.CancelFunc
	done   chan struct{}
	err    error // set before done closes
}

func (w *watcher) start(ctx context.Context) *running {
	ctx, cancel := context.WithCancel(ctx)
	r := &running{w: w, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = w.run(ctx)
	}()
	return r
}

// stop cancels the watcher wherever it is and waits for it to return.
func (r *running) stop() error {
	r.cancel()
	<-r.done
	if errors.Is(r.err, context.Canceled) {
		return nil
	}
	return r.err
}

// caughtUp waits until the watcher has read the feed up to the account's
// revision now.
func (r *running) caughtUp(ctx context.Context) error {
	target, err := r.w.acct.Revision(ctx)
	if err != nil {
		return err
	}
	for {
		seen, progress := r.w.position()
		if seen >= target {
			return nil
		}
		select {
		case <-progress:
		case <-r.done:
			if seen, _ := r.w.position(); seen >= target {
				return nil
			}
			return fmt.Errorf("the watcher stopped at revision %d of %d: %v", seen, target, r.err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// The writers' side: plain writes to Orders, which know nothing of the
// view.

func order(region, id, customer string, c int64) localtable.Entity {
	e, err := localtable.Marshal(Order{PartitionKey: region, RowKey: id, Customer: customer, Cents: c})
	if err != nil {
		panic(err)
	}
	return e
}

func insertAll(ctx context.Context, orders *localtable.Table, es ...localtable.Entity) error {
	var actions []localtable.Action
	for _, e := range es {
		actions = append(actions, localtable.Action{Type: localtable.ActionInsert, Entity: e})
	}
	_, err := orders.Transact(ctx, actions)
	return err
}

// printView prints the view's totals and checkpoint.
func printView(ctx context.Context, acct *localtable.Account, w io.Writer) error {
	v, err := readView(ctx, acct)
	if err != nil {
		return err
	}
	var parts []string
	for _, t := range v.totals {
		plural := "s"
		if t.Orders == 1 {
			plural = ""
		}
		parts = append(parts, fmt.Sprintf("%s %d order%s %s", t.Customer, t.Orders, plural, cents(t.Cents)))
	}
	fmt.Fprintf(w, "  view at revision %d: %s\n", v.checkpoint, strings.Join(parts, "; "))
	return nil
}

// view is the view as stored.
type view struct {
	totals     []Totals // in key order
	lines      map[string]Line
	checkpoint int64
}

func readView(ctx context.Context, acct *localtable.Account) (view, error) {
	v := view{lines: map[string]Line{}}
	for e, err := range acct.Table(viewTable).QueryAll(ctx, nil) {
		if err != nil {
			return v, err
		}
		parts, err := localtable.SplitCompoundKey(e.RowKey)
		if err != nil {
			return v, err
		}
		switch {
		case e.PartitionKey != viewPK:
			return v, fmt.Errorf("view entity %s/%s outside the view's partition", e.PartitionKey, e.RowKey)
		case e.RowKey == checkpointRK:
			var cp Checkpoint
			err = localtable.Unmarshal(e, &cp)
			v.checkpoint = cp.Revision
		case parts[0] == "customer":
			var t Totals
			err = localtable.Unmarshal(e, &t)
			v.totals = append(v.totals, t)
		case parts[0] == "line":
			var l Line
			err = localtable.Unmarshal(e, &l)
			v.lines[e.RowKey] = l
		default:
			err = fmt.Errorf("unexpected view entity %s", e.RowKey)
		}
		if err != nil {
			return v, err
		}
	}
	return v, nil
}

// check recomputes the totals from Orders and compares them with the view.
func check(ctx context.Context, acct *localtable.Account) (string, error) {
	want := map[string]*Totals{}
	orders := 0
	var lines []string
	for e, err := range acct.Table(sourceTable).QueryAll(ctx, nil) {
		if err != nil {
			return "", err
		}
		var o Order
		if err := localtable.Unmarshal(e, &o); err != nil {
			return "", err
		}
		orders++
		lines = append(lines, lineKey(o.PartitionKey, o.RowKey)+"="+o.Customer+" "+cents(o.Cents))
		t := want[o.Customer]
		if t == nil {
			t = &Totals{Customer: o.Customer}
			want[o.Customer] = t
		}
		t.Orders++
		t.Cents += o.Cents
	}
	v, err := readView(ctx, acct)
	if err != nil {
		return "", err
	}
	if len(v.totals) != len(want) {
		return "", fmt.Errorf("the view has %d customers, the orders %d", len(v.totals), len(want))
	}
	for _, t := range v.totals {
		w := want[t.Customer]
		if w == nil || w.Orders != t.Orders || w.Cents != t.Cents {
			return "", fmt.Errorf("view: %s %d orders %s; recomputed: %+v", t.Customer, t.Orders, cents(t.Cents), w)
		}
	}
	var have []string
	for rk, l := range v.lines {
		have = append(have, rk+"="+l.Customer+" "+cents(l.Cents))
	}
	sort.Strings(lines)
	sort.Strings(have)
	if strings.Join(lines, "\n") != strings.Join(have, "\n") {
		return "", fmt.Errorf("view lines:\n%s\norders:\n%s", strings.Join(have, "\n"), strings.Join(lines, "\n"))
	}
	return fmt.Sprintf("%d customers, %d orders, checkpoint at revision %d", len(want), orders, v.checkpoint), nil
}

// run is the scenario, in the pebble store in dir.
func run(ctx context.Context, dir string, out io.Writer) error {
	acct, err := openAccount(dir)
	if err != nil {
		return err
	}
	defer func() {
		if acct != nil {
			acct.Close()
		}
	}()
	orders, err := acct.CreateTable(ctx, sourceTable)
	if err != nil {
		return err
	}
	if _, err := acct.CreateTable(ctx, viewTable); err != nil {
		return err
	}
	w := &watcher{acct: acct, log: out}
	r := w.start(ctx)
	defer func() { r.stop() }()
	step := func(format string, args ...any) error {
		if err := r.caughtUp(ctx); err != nil {
			return err
		}
		fmt.Fprintf(out, format+"\n", args...)
		return nil
	}
	show := func() error {
		if err := r.caughtUp(ctx); err != nil {
			return err
		}
		return printView(ctx, acct, out)
	}
	rev := func() localtable.Revision {
		n, err := acct.Revision(ctx)
		if err != nil {
			panic(err)
		}
		return n
	}

	fmt.Fprintf(out, "Tables %s (source) and %s (view) in pebble, feed on; the watcher starts at revision %d.\n\n", sourceTable, viewTable, rev())

	fmt.Fprintln(out, "A transaction inserts three orders in region east, then one in west:")
	if err := insertAll(ctx, orders, order("east", "1001", "ada", 2500), order("east", "1002", "bob", 1000), order("east", "1003", "ada", 500)); err != nil {
		return err
	}
	if err := r.caughtUp(ctx); err != nil { // each write after the watcher's: the revisions printed are the same every run
		return err
	}
	if err := insertAll(ctx, orders, order("west", "2001", "cy", 4000)); err != nil {
		return err
	}
	if err := show(); err != nil {
		return err
	}
	fmt.Fprintln(out, "  (the revisions skipped are the view's own writes: the feed has them too, and the watcher passes over them)")

	if err := step("\nOrder east/1002 is replaced: it now belongs to ada, for 12.00 (it moves between customers):"); err != nil {
		return err
	}
	if _, err := orders.Update(ctx, order("east", "1002", "ada", 1200), nil); err != nil {
		return err
	}
	if err := show(); err != nil {
		return err
	}

	if err := step("\nA merge raises west/2001 to 45.00:"); err != nil {
		return err
	}
	merge := localtable.Entity{PartitionKey: "west", RowKey: "2001"}
	merge.Set("Cents", localtable.Int64Value(4500))
	if _, err := orders.Update(ctx, merge, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge}); err != nil {
		return err
	}
	if err := show(); err != nil {
		return err
	}

	before := rev()
	err = insertAll(ctx, orders, order("east", "1004", "bob", 9900), order("east", "1001", "bob", 100))
	var te *localtable.TransactionError
	if !errors.As(err, &te) {
		return fmt.Errorf("the failing transaction: %v", err)
	}
	if err := step("\nA transaction inserting east/1004 and east/1001 again fails at action %d (%s): the revision stays %d, the view never sees 1004:",
		te.Index, localtable.ErrorCodeOf(err), rev()); err != nil {
		return err
	}
	if rev() != before {
		return fmt.Errorf("a failed transaction moved the revision from %d to %d", before, rev())
	}
	if err := show(); err != nil {
		return err
	}

	if err := step("\nOrder east/1003 is deleted:"); err != nil {
		return err
	}
	if err := orders.Delete(ctx, "east", "1003", nil); err != nil {
		return err
	}
	if err := show(); err != nil {
		return err
	}

	// The watcher goes away without a word, and the store is closed and
	// reopened; writes go on meanwhile.
	if err := r.caughtUp(ctx); err != nil {
		return err
	}
	if err := r.stop(); err != nil {
		return err
	}
	if err := acct.Close(); err != nil {
		return err
	}
	acct = nil
	if acct, err = openAccount(dir); err != nil {
		return err
	}
	orders = acct.Table(sourceTable)
	cp, _, _, err := readCheckpoint(ctx, acct.Table(viewTable))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe watcher is stopped, the store closed and reopened; its checkpoint is revision %d.\n", cp)
	fmt.Fprintln(out, "While it is down, west/2002 is inserted for bob and east/1001 moves to cy:")
	if err := insertAll(ctx, orders, order("west", "2002", "bob", 750)); err != nil {
		return err
	}
	if _, err := orders.Update(ctx, order("east", "1001", "cy", 2500), nil); err != nil {
		return err
	}
	if err := printView(ctx, acct, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "Restarted, the watcher reads the feed after revision %d:\n", cp)
	w = &watcher{acct: acct, log: out}
	r = w.start(ctx)
	if err := show(); err != nil {
		return err
	}

	if err := r.caughtUp(ctx); err != nil {
		return err
	}
	if err := r.stop(); err != nil {
		return err
	}
	summary, err := check(ctx, acct)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe view equals a recomputation from %s: %s.\n", sourceTable, summary)
	return nil
}
