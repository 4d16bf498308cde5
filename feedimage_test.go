package localtable

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage/pebble"
)

// openRefFeed opens an account with the feed on over a pebble store in
// dir, whose feed records name their entities.
func openRefFeed(t *testing.T, dir string, opts *FeedOptions) (*Account, *pebble.DB) {
	t.Helper()
	db, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(&Options{Engine: db, Feed: opts})
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	if !a.feed.refs {
		t.Fatal("pebble's feed does not name its entities")
	}
	return a, db
}

// describeFeed reads the whole feed of a and describes each change: its
// kind, table, keys and Int64 properties.
func describeFeed(t *testing.T, a *Account, after Revision) ([]string, error) {
	t.Helper()
	var got []string
	_, err := a.feed.read(context.Background(), after, func(c *Change) bool {
		s := fmt.Sprintf("%d %v %s", c.Revision, c.Kind, c.Table)
		if c.Kind.IsEntity() {
			s += fmt.Sprintf(" %s/%s", c.Entity.PartitionKey, c.Entity.RowKey)
			names := make([]string, 0, len(c.Entity.Properties))
			for n, v := range c.Entity.Properties {
				if v.Kind() == KindInt64 { // not a padding
					names = append(names, n)
				}
			}
			slices.Sort(names)
			for _, n := range names {
				s += fmt.Sprintf(" %s=%v", n, c.Entity.Properties[n].Int64())
			}
		}
		got = append(got, s)
		return true
	})
	return got, err
}

// TestFeedImages: on pebble, where the feed's records name their
// entities, each change still reads as the entity was right after it,
// once the entity is replaced, merged into, deleted and inserted again,
// once its table is deleted and created again, and once the account is
// restored from a checkpoint; Verify finds the store sound, and a missing
// image.
func TestFeedImages(t *testing.T) {
	ctx := context.Background()
	a, db := openRefFeed(t, t.TempDir(), &FeedOptions{})
	defer db.Close()
	defer a.Close()
	n := func(v int64) Properties { return Properties{"N": Int64Value(v)} }
	tbl, err := a.CreateTable(ctx, "Tab")
	noErr(t, err)
	_, err = tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: "a", Properties: n(1)})
	noErr(t, err)
	_, err = tbl.Upsert(ctx, Entity{PartitionKey: "p", RowKey: "a", Properties: n(2)}, nil)
	noErr(t, err)
	_, err = tbl.Update(ctx, Entity{PartitionKey: "p", RowKey: "a", Properties: Properties{"M": Int64Value(3)}}, &UpdateOptions{Mode: UpdateModeMerge})
	noErr(t, err)
	noErr(t, tbl.Delete(ctx, "p", "a", nil))
	_, err = tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: "a", Properties: n(5)})
	noErr(t, err)
	_, err = tbl.Transact(ctx, []Action{
		{Type: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: "b", Properties: n(6)}},
		{Type: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: "c", Properties: n(7)}},
	})
	noErr(t, err)
	noErr(t, a.DeleteTable(ctx, "Tab"))
	tbl, err = a.CreateTable(ctx, "Tab")
	noErr(t, err)
	_, err = tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: "b", Properties: n(10)})
	noErr(t, err)
	want := []string{
		"1 TableCreated Tab",
		"2 Insert Tab p/a N=1",
		"3 Replace Tab p/a N=2",
		"4 Merge Tab p/a M=3 N=2",
		"5 Delete Tab p/a",
		"6 Insert Tab p/a N=5",
		"7 Insert Tab p/b N=6",
		"8 Insert Tab p/c N=7",
		"9 TableDeleted Tab",
		"10 TableCreated Tab",
		"11 Insert Tab p/b N=10",
	}
	check := func(when string, want []string) {
		t.Helper()
		got, err := describeFeed(t, a, 0)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: the feed reads\n%s\nwant\n%s", when, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		rep, err := a.Verify(ctx)
		if err != nil || !rep.OK() {
			t.Fatalf("%s: Verify: %v %+v", when, err, rep)
		}
	}
	check("after the writes", want)
	// The versions of a that the replace, the merge and the delete
	// replaced; a, b and c, which the table's deletion took.
	if got := countKeys(t, db, []byte{keyenc.PrefixFeedImage, 1}); got != 6 {
		t.Errorf("%d images, want 6", got)
	}

	cp, err := a.Checkpoint(ctx)
	noErr(t, err)
	defer cp.Close()
	_, err = tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: "d", Properties: n(12)})
	noErr(t, err)
	noErr(t, a.Restore(ctx, cp))
	want = append(want, "12 Insert Tab p/d N=12", "13 Restored ")
	check("after the restore", want)
	if _, err := tbl.Get(ctx, "p", "d", nil); !errors.Is(err, ErrEntityNotFound) {
		t.Fatalf("d after the restore: %v", err)
	}

	// A missing image is a problem Verify names.
	b := db.NewBatch()
	noErr(t, b.Delete(keyenc.FeedImageKey(nil, keyenc.AppendEntityKey(nil, 1, "p", "a"), mustTicks(t, a, 2))))
	noErr(t, b.Commit(true))
	b.Close()
	rep, err := a.Verify(ctx)
	noErr(t, err)
	if s := strings.Join(rep.Problems, "\n"); !strings.Contains(s, "change 2 names the entity") {
		t.Fatalf("Verify with an image deleted: %+v", rep)
	}
	if _, err := describeFeed(t, a, 0); err == nil || errors.Is(err, ErrFeedCompacted) {
		t.Fatalf("reading a feed with an image deleted: %v, want it corrupt", err)
	}
}

// mustTicks returns the time of the feed's record of revision rev: the
// Timestamp of the entities its changes name.
func mustTicks(t *testing.T, a *Account, rev Revision) int64 {
	t.Helper()
	v, c, err := a.eng.Get(keyenc.FeedKey(uint64(rev)))
	if err != nil {
		t.Fatalf("feed record %d: %v", rev, err)
	}
	defer c.Close()
	_, ticks, ok := feedRecordHead(keyenc.FeedKey(uint64(rev)), v)
	if !ok {
		t.Fatalf("feed record %d does not decode", rev)
	}
	return ticks
}

// TestFeedImagesPruned: the feed's pruning deletes the images of the
// changes it lets go, with their markers, so that the images a store
// keeps stay within its retention; a read of a change whose entity was
// pruned from under it is a *FeedCompactedError.
func TestFeedImagesPruned(t *testing.T) {
	ctx := context.Background()
	a, db := openRefFeed(t, t.TempDir(), &FeedOptions{KeepChanges: 10})
	defer db.Close()
	defer a.Close()
	tbl, err := a.CreateTable(ctx, "Tab")
	if err != nil {
		t.Fatal(err)
	}
	const writes = 3 * feedPruneEvery
	for i := range writes {
		if _, err := tbl.Upsert(ctx, Entity{PartitionKey: "p", RowKey: fmt.Sprint(i % 7), Properties: Properties{"N": Int64Value(int64(i))}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Each upsert after the first 7 replaced a version: an image each,
	// but the pruning kept those of the last changes only.
	images := countKeys(t, db, []byte{keyenc.PrefixFeedImage, 1})
	markers := countKeys(t, db, []byte{keyenc.PrefixFeedImage, 2})
	kept := feedPruneEvery + 10 + maxFeedRecordChanges
	if images == 0 || images > kept || markers != images {
		t.Fatalf("%d images and %d markers after %d replaces; want them pruned to at most %d", images, markers, writes-7, kept)
	}
	rep, err := a.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("Verify: %v %+v", err, rep)
	}
	// The last changes read as written.
	got, err := describeFeed(t, a, writes-2)
	if err != nil || len(got) != 3 || got[2] != fmt.Sprintf("%d Replace Tab p/%d N=%d", writes+1, (writes-1)%7, writes-1) {
		t.Fatalf("the last changes: %q, %v", got, err)
	}
	// A reader whose change's entity went with the pruning: compacted.
	err = a.feed.gone(ctx, &imageGoneError{rev: 2})
	var ce *FeedCompactedError
	if !errors.As(err, &ce) || ce.After != 1 || ce.Oldest <= 2 {
		t.Fatalf("an entity gone with the pruning: %v", err)
	}
	var g *imageGoneError
	if err := a.feed.gone(ctx, &imageGoneError{rev: writes}); !errors.As(err, &g) {
		t.Fatalf("an entity missing that the feed still needs: %v, want it corrupt", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, err := range a.Watch(ctx, &WatchOptions{After: 1}) {
		if !errors.Is(err, ErrFeedCompacted) {
			t.Fatalf("a watch from revision 1: %v", err)
		}
		break
	}
}

// TestFeedImagesFeedOff: an account opened with the feed off over a store
// whose feed names its entities keeps the images that feed needs, so that
// with the feed on again each change of it reads as it was written; and
// only those.
func TestFeedImagesFeedOff(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	n := func(v int64) Properties { return Properties{"N": Int64Value(v)} }
	a, db := openRefFeed(t, dir, &FeedOptions{})
	tbl, err := a.CreateTable(ctx, "Tab")
	noErr(t, err)
	_, err = tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: "a", Properties: n(1)})
	noErr(t, err)
	_, err = tbl.Transact(ctx, []Action{
		{Type: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: "b", Properties: n(2)}},
		{Type: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: "c", Properties: n(3)}},
	})
	noErr(t, err)
	noErr(t, a.Close())
	db.Close()

	db, err = pebble.Open(dir, nil)
	noErr(t, err)
	a, err = Open(&Options{Engine: db}) // the feed off
	noErr(t, err)
	if a.keeper == nil || a.keeper.win.Load() == nil {
		t.Fatal("the account with the feed off keeps no images")
	}
	tbl = a.Table("Tab")
	_, err = tbl.Upsert(ctx, Entity{PartitionKey: "p", RowKey: "a", Properties: n(10)}, nil)
	noErr(t, err)
	noErr(t, tbl.Delete(ctx, "p", "b", nil))
	_, err = tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: "d", Properties: n(11)})
	noErr(t, err)
	// d, written with the feed off, is named by no record: replacing it
	// keeps nothing.
	_, err = tbl.Upsert(ctx, Entity{PartitionKey: "p", RowKey: "d", Properties: n(12)}, nil)
	noErr(t, err)
	if got := countKeys(t, db, []byte{keyenc.PrefixFeedImage, 1}); got != 2 {
		t.Errorf("%d images after replacing a and d and deleting b, want 2 (a's and b's)", got)
	}
	noErr(t, a.DeleteTable(ctx, "Tab")) // c, still as the feed names it
	rep, err := a.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("Verify with the feed off: %v %+v", err, rep)
	}
	noErr(t, a.Close())
	db.Close()

	a, db = openRefFeed(t, dir, &FeedOptions{})
	defer db.Close()
	defer a.Close()
	got, err := describeFeed(t, a, 0)
	want := []string{"1 TableCreated Tab", "2 Insert Tab p/a N=1", "3 Insert Tab p/b N=2", "4 Insert Tab p/c N=3"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("the feed after writes with it off: %q, %v; want %q", got, err, want)
	}
}

// TestFeedImagesPowerLoss: on pebble, power lost while replaces, deletes
// and inserts were not synced leaves a feed that reads to its end, each
// change with the entity as it was right after it, and that agrees with
// the entities that survived: the images are written with the writes
// that make them, or not at all.
func TestFeedImagesPowerLoss(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	open := func(fs vfs.FS, noSync bool) (*Account, *pebble.DB) {
		t.Helper()
		db, err := pebble.Open("db", &pebble.Options{FS: fs, NoSync: noSync})
		noErr(t, err)
		a, err := Open(&Options{Engine: db, Feed: &FeedOptions{}})
		noErr(t, err)
		return a, db
	}
	// Entities of 3 KB, so that the log's blocks fill and reach its file
	// (a power loss keeps some of what is written but not synced).
	pad := BinaryValue(make([]byte, 3000))
	n := func(v int64) Properties { return Properties{"N": Int64Value(v), "Pad": pad} }
	a, db := open(mem, false)
	tbl, err := a.CreateTable(ctx, "Tab")
	noErr(t, err)
	for i := range 20 {
		_, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: fmt.Sprint(i), Properties: n(int64(i))})
		noErr(t, err)
	}
	noErr(t, a.Close())
	db.Close()

	a, db = open(mem, true) // a power loss loses what follows, or part of it
	tbl = a.Table("Tab")
	for i := range 10 {
		_, err := tbl.Upsert(ctx, Entity{PartitionKey: "p", RowKey: fmt.Sprint(i), Properties: n(int64(100 + i))}, nil)
		noErr(t, err)
		if i%2 == 0 {
			noErr(t, tbl.Delete(ctx, "p", fmt.Sprint(10+i/2), nil))
		}
		_, err = tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: fmt.Sprint(20 + i), Properties: n(int64(20 + i))})
		noErr(t, err)
	}
	var imgs []*vfs.MemFS
	for seed := range uint64(40) {
		imgs = append(imgs, mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: int(seed * 5 % 100), RNG: rand.New(rand.NewPCG(seed, 7))}))
	}
	noErr(t, a.Close())
	db.Close()

	for seed, img := range imgs {
		a, db := open(img, false)
		got, err := describeFeed(t, a, 0)
		if err != nil {
			t.Fatalf("crash %d: the feed does not read: %v", seed, err)
		}
		t.Logf("crash %d: %d changes survived", seed, len(got))
		// What the feed says each entity is, from its changes in order,
		// against what it says of each change.
		last := map[string]string{}
		for _, c := range got[1:] {
			var rev int
			var kind, table, keys, prop string
			fmt.Sscanf(c, "%d %s %s %s %s", &rev, &kind, &table, &keys, &prop) // N, then Pad
			row := strings.TrimPrefix(keys, "p/")
			var v int
			fmt.Sscanf(prop, "N=%d", &v)
			switch kind {
			case "Insert":
				if v != mustAtoi(t, row) {
					t.Fatalf("crash %d: change %q", seed, c)
				}
				last[row] = prop
			case "Replace":
				if v != 100+mustAtoi(t, row) {
					t.Fatalf("crash %d: change %q", seed, c)
				}
				last[row] = prop
			case "Delete":
				delete(last, row)
			default:
				t.Fatalf("crash %d: change %q", seed, c)
			}
		}
		stored := map[string]string{}
		for e, err := range a.Table("Tab").QueryAll(ctx, nil) {
			noErr(t, err)
			stored[e.RowKey] = fmt.Sprintf("N=%d", e.Properties["N"].Int64())
		}
		if fmt.Sprint(stored) != fmt.Sprint(last) {
			t.Fatalf("crash %d: the entities are %v, the feed says %v", seed, stored, last)
		}
		rep, err := a.Verify(ctx)
		if err != nil || !rep.OK() {
			t.Fatalf("crash %d: Verify: %v %+v", seed, err, rep)
		}
		noErr(t, a.Close())
		db.Close()
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var v int
	if _, err := fmt.Sscanf(s, "%d", &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// noErr fails t at once if err is not nil.
func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
