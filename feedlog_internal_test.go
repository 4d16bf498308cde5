package localtable

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/golang/snappy"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
	"github.com/localtable/localtable/storage/pebble"
)

// TestFeedRecordVersions: a record of version 1 reads as the same changes
// as one of version 2, which ends with its last entity's key and record,
// so that the entity's write can be nested in it.
func TestFeedRecordVersions(t *testing.T) {
	const ticks = 638000000000000000
	rec := appendRecord(nil, ticks, Properties{"Name": StringValue("n"), "Age": Int32Value(7)})
	k1 := keyenc.AppendEntityKey(nil, 3, "p", "r1")
	k2 := keyenc.AppendEntityKey(nil, 3, "p", "r2")
	changes := []change{
		{kind: changeTableCreated, table: "T"},
		{kind: changeDelete, table: "T", key: k2},
		{kind: changeInsert, table: "T", key: k1, new: rec},
	}
	v1 := appendFeedRecord(nil, feedRecordV1, ticks, changes, len(changes), nil, nil)
	v2 := appendFeedRecord(nil, feedRecordV2, ticks, changes, len(changes), nil, nil)
	if v1[0] != feedRecordV1 || v2[0] != feedRecordV2 || len(v2) != len(v1)+2*keyenc.TablePrefixLen {
		t.Fatalf("versions %d and %d written, of %d and %d bytes", v1[0], v2[0], len(v1), len(v2))
	}
	tail := append(append([]byte(nil), k1...), rec...)
	if string(v2[len(v2)-len(tail):]) != string(tail) {
		t.Errorf("the record does not end with its last entity's key and record")
	}
	// Version 2 can leave each entity, its key then its record, out, for
	// the entity's write to be nested in the record's: filled in where
	// the record says (as the engine does, storage.NestedSetter), it is
	// the whole record. A commit's entities follow one another after the
	// record's head.
	tx := insertChanges("T", 5, ticks)
	tx = append(tx[:2], append([]change{{kind: changeDelete, table: "T", key: k2}, {kind: changeTablePolicies, table: "T"}}, tx[2:]...)...)
	tx[4].expired = true
	nest, ats := make([]int32, len(tx)), make([]int32, len(tx))
	for i, ch := range tx {
		nest[i] = -1
		if ch.new != nil && i != 1 { // the second entity is not nested
			nest[i] = int32(i)
		}
	}
	holed := appendFeedRecord([]byte("head"), feedRecordV2, ticks, tx, len(tx), nest, ats)[4:]
	var in []storage.Nested
	last := int32(10)
	for i, ch := range tx {
		if nest[i] < 0 {
			continue
		}
		if ats[i] < last || int(ats[i]) > len(holed) {
			t.Errorf("change %d held at %d, after %d, in a record of %d bytes", i, ats[i], last, len(holed))
		}
		last = ats[i]
		in = append(in, storage.Nested{Key: ch.key, Value: ch.new, At: int(ats[i])})
	}
	whole := appendFeedRecord(nil, feedRecordV2, ticks, tx, len(tx), nil, nil)
	if filled, err := fillIn(holed, in); err != nil || len(in) != 4 || string(filled) != string(whole) {
		t.Errorf("the record with %d entities left out, filled in, differs from the whole one", len(in))
	}
	read := func(rec []byte) []Change {
		var cs []Change
		if _, err := decodeFeedRecord(keyenc.FeedKey(5), rec, 0, func(c *Change) bool { cs = append(cs, *c); return true }); err != nil {
			t.Fatalf("version %d: %v", rec[0], err)
		}
		return cs
	}
	c1, c2 := read(v1), read(v2)
	if len(c2) != 3 || c2[1].Entity.RowKey != "r2" || c2[2].Entity.RowKey != "r1" || c2[2].Entity.Properties["Age"].Int32() != 7 || c2[2].Revision != 7 || !c2[2].Last {
		t.Errorf("version 2 read as %+v", c2)
	}
	if !reflect.DeepEqual(c1, c2) {
		t.Errorf("version 1 read as\n%+v\nversion 2 as\n%+v", c1, c2)
	}
	// Truncated or overlong lengths are corrupt, never a panic.
	for _, rec := range [][]byte{v1, v2} {
		for n := 10; n < len(rec); n++ {
			if _, err := decodeFeedRecord(keyenc.FeedKey(5), rec[:n], 0, func(*Change) bool { return true }); err == nil {
				t.Errorf("version %d: a record cut at %d of %d bytes read without an error", rec[0], n, len(rec))
			}
		}
	}
}

// TestFeedNestsWrites: on the memory engine, every feed record is of
// version 2 and holds the entities its commit writes, whose writes are
// nested in the record's: one buffer holds the record and every entity
// of the commit, a single write's or a transaction's (an insert, a
// replace, the insert over an expired entity; a delete has none).
func TestFeedNestsWrites(t *testing.T) {
	ctx := context.Background()
	eng := memory.New(&memory.Options{Logs: keyenc.LogPrefixes()}) // as Open makes it
	now := time.Unix(1_800_000_000, 0)
	a, tbl := openTable(t, &Options{Engine: eng, Feed: &FeedOptions{}, Clock: func() time.Time { return now }, Expiry: &ExpiryOptions{Interval: -1}}, "Tbl")
	if err := tbl.SetExpiry(ctx, "Expires"); err != nil {
		t.Fatal(err)
	}
	id := a.cat.Load().byName["tbl"].id
	for _, rk := range []string{"one", "gone", "old"} {
		e := Entity{PartitionKey: "p", RowKey: rk, Properties: Properties{"N": Int32Value(1)}}
		if rk == "old" {
			e.Properties["Expires"] = DateTimeValue(now.Add(time.Second))
		}
		if _, err := tbl.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Minute) // "old" has expired
	acts := []Action{
		{Type: ActionUpdateReplace, Entity: Entity{PartitionKey: "p", RowKey: "one", Properties: Properties{"N": Int32Value(2)}}},
		{Type: ActionDelete, Entity: Entity{PartitionKey: "p", RowKey: "gone"}, IfMatch: "*"},
		{Type: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: "old"}},
	}
	const n = 40
	for i := range n {
		acts = append(acts, Action{Type: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: fmt.Sprintf("t%03d", i),
			Properties: Properties{"I": Int32Value(int32(i)), "S": StringValue(fmt.Sprint("value ", i))}}})
	}
	if _, err := tbl.Transact(ctx, acts); err != nil {
		t.Fatal(err)
	}
	var feed [][]byte
	it, err := eng.NewIter(feedBounds)
	if err != nil {
		t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		feed = append(feed, it.Value())
	}
	it.Close()
	if len(feed) != 5 {
		t.Fatalf("%d feed records; want the table's, three inserts', the transaction's", len(feed))
	}
	for i, f := range feed {
		if f[0] != feedRecordV2 {
			t.Errorf("feed record %d of version %d, want %d", i, f[0], feedRecordV2)
		}
	}
	in := func(v, f []byte) bool {
		p, s := uintptr(unsafe.Pointer(unsafe.SliceData(v))), uintptr(unsafe.Pointer(unsafe.SliceData(f)))
		return p >= s && p+uintptr(len(v)) <= s+uintptr(len(f))
	}
	tx := feed[4]
	for _, act := range acts {
		rk := act.Entity.RowKey
		v, _, err := eng.Get(keyenc.AppendEntityKey(nil, id, "p", rk))
		if act.Type == ActionDelete {
			if !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("entity %s: %v after its delete", rk, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(rk, err)
		}
		if !in(v, tx) {
			t.Errorf("entity %s not stored in its transaction's feed record", rk)
		}
	}
	var changes []Change
	if _, err := decodeFeedRecord(keyenc.FeedKey(5), tx, 0, func(c *Change) bool { changes = append(changes, *c); return true }); err != nil {
		t.Fatal(err)
	}
	if len(changes) != n+4 || changes[2].Kind != ChangeExpired || changes[3].Kind != ChangeInsert || changes[3].Entity.RowKey != "old" ||
		changes[n+3].Entity.Properties["S"].String() != fmt.Sprint("value ", n-1) {
		t.Errorf("the transaction's record reads as %d changes: %+v", len(changes), changes)
	}
	rep, err := a.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Errorf("Verify: %+v, %v", rep, err)
	}
	var _ storage.NestedSetter = eng.NewBatch().(storage.NestedSetter)
}

// TestFeedTransactionAllocs: on the memory engine, a transaction of 100
// inserts with the feed on makes one allocation for its record and its
// entities together, where with the feed off each entity has its own:
// about 100 allocations fewer (not as many, as when the record copied
// them); at least 50 fewer, for the pools the race detector empties at
// random. Into a table with a covering index, whose entries hold the
// entities, the feed's record copies them: about as many allocations as
// the feed off (not 50 more here, 180 on a larger table, as when each
// pruning of the feed, every 1,024 revisions, published the engine's
// tree and made the next commits copy the paths they changed).
func TestFeedTransactionAllocs(t *testing.T) {
	ctx := context.Background()
	allocs := func(feed *FeedOptions, index bool) float64 {
		_, tbl := openTable(t, &Options{Feed: feed}, "Tbl") // the memory engine, as Open makes it
		if index {
			if err := tbl.CreateIndex(ctx, "byN", "N"); err != nil {
				t.Fatal(err)
			}
		}
		acts := make([]Action, MaxTransactionActions)
		keys := make([]string, 101*len(acts)) // AllocsPerRun runs once more than asked
		for i := range keys {
			keys[i] = fmt.Sprintf("r%06d", i)
		}
		i := 0
		return testing.AllocsPerRun(100, func() {
			for j := range acts {
				acts[j] = Action{Type: ActionInsert, Entity: Entity{PartitionKey: fmt.Sprint("p", i/len(acts)%10), RowKey: keys[i],
					Properties: Properties{"N": Int32Value(int32(i % 100))}}}
				i++
			}
			if _, err := tbl.Transact(ctx, acts); err != nil {
				t.Fatal(err)
			}
		})
	}
	feed := &FeedOptions{KeepChanges: 1000} // pruned every 1,024 revisions
	off, on := allocs(nil, false), allocs(feed, false)
	t.Logf("allocations of a transaction of 100: %.0f with the feed off, %.0f on", off, on)
	if on > off-50 {
		t.Errorf("a transaction of 100 makes %.0f allocations with the feed on, %.0f with it off", on, off)
	}
	off, on = allocs(nil, true), allocs(feed, true)
	t.Logf("into a table with a covering index: %.0f with the feed off, %.0f on", off, on)
	if on > off+25 {
		t.Errorf("a transaction of 100 into a table with a covering index makes %.0f allocations with the feed on, %.0f with it off", on, off)
	}
}

// TestFeedRecordCompressed: a record of version 1 whose changes are large
// compresses into one of version 3 that reads as the same changes; small
// or incompressible changes stay version 1; a version 3 record cut short,
// or whose block claims more than a record can hold, is corrupt.
func TestFeedRecordCompressed(t *testing.T) {
	const ticks = 638000000000000000
	changes := insertChanges("Orders", 100, ticks)
	v1 := appendFeedRecord(nil, feedRecordV1, ticks, changes, len(changes), nil, nil)
	prefix := []byte("key+next.........") // what precedes the record in the commit's scratch
	c := new(commitContext)
	v3 := compressFeedRecord(c, append(append([]byte(nil), prefix...), v1...), len(prefix))
	if string(v3[:len(prefix)]) != string(prefix) {
		t.Fatalf("the bytes before the record changed: %q", v3[:len(prefix)])
	}
	v3 = v3[len(prefix):]
	if v3[0] != feedRecordV3 || len(v3) > len(v1)/2 {
		t.Fatalf("a transaction's record of %d bytes compressed to version %d of %d bytes", len(v1), v3[0], len(v3))
	}
	read := func(rec []byte) []Change {
		var cs []Change
		if _, err := decodeFeedRecord(keyenc.FeedKey(5), rec, 0, func(c *Change) bool { cs = append(cs, *c); return true }); err != nil {
			t.Fatalf("version %d: %v", rec[0], err)
		}
		return cs
	}
	c1, c3 := read(v1), read(v3)
	if len(c3) != 100 || c3[99].Revision != 104 || !c3[99].Last || c3[42].Entity.RowKey != "r042" || c3[42].Entity.Properties["N"].Int32() != 42 {
		t.Fatalf("version 3 read as %d changes, the 43rd %+v", len(c3), c3[42])
	}
	if !reflect.DeepEqual(c1, c3) {
		t.Errorf("version 3 does not read as version 1")
	}
	// Resuming inside the record skips the changes up to after.
	var got []Revision
	if _, err := decodeFeedRecord(keyenc.FeedKey(5), v3, 100, func(c *Change) bool { got = append(got, c.Revision); return true }); err != nil || len(got) != 4 || got[0] != 101 {
		t.Errorf("after revision 100: %v, %v", got, err)
	}
	// The head reads without decompressing (retention, the next revision).
	if first, at, ok := feedRecordHead(keyenc.FeedKey(5), v3); !ok || first != 5 || at != ticks {
		t.Errorf("head of version 3: %d %d %v", first, at, ok)
	}
	for n := 10; n < len(v3); n++ {
		if _, err := decodeFeedRecord(keyenc.FeedKey(5), v3[:n], 0, func(*Change) bool { return true }); err == nil {
			t.Errorf("a record of version 3 cut at %d of %d bytes read without an error", n, len(v3))
		}
	}
	// A block that claims 1 GiB: corrupt, and nothing of that size made.
	bomb := append(append([]byte(nil), v3[:11]...), binary.AppendUvarint(nil, 1<<30)...)
	bomb = append(bomb, 0)
	if _, err := decodeFeedRecord(keyenc.FeedKey(5), bomb, 0, func(*Change) bool { return true }); !errors.Is(err, errCorruptFeed) {
		t.Errorf("a block claiming 1 GiB: %v", err)
	}
	// Small changes, and changes that do not compress, stay version 1.
	small := appendFeedRecord(nil, feedRecordV1, ticks, changes[:1], 1, nil, nil)
	if r := compressFeedRecord(c, small, 0); r[0] != feedRecordV1 || string(r) != string(small) {
		t.Errorf("a small record became version %d", r[0])
	}
	noise := make([]byte, 4096)
	rand.NewChaCha8([32]byte{1}).Read(noise)
	random := appendFeedRecord(nil, feedRecordV1, ticks, []change{{kind: changeInsert, table: "T", key: changes[0].key,
		new: appendRecord(nil, ticks, Properties{"B": BinaryValue(noise)})}}, 1, nil, nil)
	if r := compressFeedRecord(c, random, 0); r[0] != feedRecordV1 || string(r) != string(random) {
		t.Errorf("an incompressible record became version %d", r[0])
	}
}

// TestFeedCompressesOnPebble: on pebble a feed record names its entities
// (version 4); a store whose feed holds records of version 1 and of
// version 3 (a transaction's compressed), as earlier builds wrote them,
// reads on after a reopen, its changes and the new ones in order, each
// once, with their entities, also the one a later write replaced.
func TestFeedCompressesOnPebble(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(compress, refs bool) (*Account, *pebble.DB) {
		t.Helper()
		db, err := pebble.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := Open(&Options{Engine: db, Feed: &FeedOptions{}})
		if err != nil {
			t.Fatal(err)
		}
		if !a.feed.compress {
			t.Fatal("pebble's feed does not compress")
		}
		if !a.feed.refs {
			t.Fatal("pebble's feed does not name its entities")
		}
		a.feed.compress, a.feed.refs = compress, refs
		return a, db
	}
	tx := func(tbl *Table, from int) {
		t.Helper()
		acts := make([]Action, 100)
		for i := range acts {
			acts[i] = Action{Type: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%04d", from+i),
				Properties: Properties{"Name": StringValue("a customer name"), "N": Int64Value(int64(from + i))}}}
		}
		if _, err := tbl.Transact(ctx, acts); err != nil {
			t.Fatal(err)
		}
	}
	versions := func(eng storage.Engine) (vs []byte, sizes []int) {
		t.Helper()
		it, err := eng.NewIter(feedBounds)
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			vs, sizes = append(vs, it.Value()[0]), append(sizes, len(it.Value()))
		}
		return vs, sizes
	}

	a, db := open(false, false) // as earlier builds wrote the feed
	tbl, err := a.CreateTable(ctx, "Orders")
	if err != nil {
		t.Fatal(err)
	}
	tx(tbl, 0)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	a, db = open(true, false) // as the previous build wrote it
	tbl = a.Table("Orders")
	tx(tbl, 100)
	if _, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: "single"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	a, db = open(true, true)
	defer db.Close()
	defer a.Close()
	tbl = a.Table("Orders")
	tx(tbl, 200)
	// Replacing r0250, inserted by the transaction just made, keeps an
	// image of it: its insert still reads as inserted.
	if _, err := tbl.Upsert(ctx, Entity{PartitionKey: "p", RowKey: "r0250", Properties: Properties{"N": Int64Value(-1)}}, nil); err != nil {
		t.Fatal(err)
	}
	vs, sizes := versions(db)
	if string(vs) != string([]byte{feedRecordV1, feedRecordV1, feedRecordV3, feedRecordV1, feedRecordV5, feedRecordV4}) {
		t.Fatalf("feed records of versions %v; want the table's 1, the first transaction's 1, the next one's 3, the insert's 1, the last transaction's 5, the replace's 4", vs)
	}
	if sizes[4] >= sizes[2] {
		t.Errorf("the record naming a transaction's entities takes %d bytes, the one copying them %d", sizes[4], sizes[2])
	}
	if sizes[2] > sizes[1]/2 {
		t.Errorf("the compressed transaction's record takes %d bytes, the other %d", sizes[2], sizes[1])
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var got []Change
	for c, err := range a.Watch(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
		if len(got) == 303 {
			break
		}
	}
	for i, c := range got {
		if c.Revision != Revision(i+1) {
			t.Fatalf("change %d has revision %d", i, c.Revision)
		}
		j := i - 1 // the entity's number
		switch {
		case i == 0 || i == 201:
			continue // the table's creation, the single insert
		case i == 302:
			if c.Kind != ChangeReplace || c.Entity.RowKey != "r0250" || c.Entity.Properties["N"].Int64() != -1 {
				t.Fatalf("last change: %+v", c)
			}
			continue
		case i > 201:
			j--
		}
		if want := fmt.Sprintf("r%04d", j); c.Kind != ChangeInsert || c.Entity.RowKey != want || c.Entity.Properties["N"].Int64() != int64(j) || c.Entity.Properties["Name"].String() != "a customer name" {
			t.Fatalf("change %d: %+v, want the insert of %s", i, c, want)
		}
	}
	if got[201].Entity.RowKey != "single" {
		t.Errorf("change 201: %+v", got[201])
	}
	rep, err := a.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Errorf("Verify: %+v, %v", rep, err)
	}
}

// FuzzFeedRecord: a feed record of any version and any bytes decodes
// without a panic, also with the entities of version 4 looked up; a
// record of version 1 (or 4) that decodes compresses into one that
// decodes to as many changes, and holds its changes' bytes.
func FuzzFeedRecord(f *testing.F) {
	const ticks = 638000000000000000
	changes := insertChanges("T", 20, ticks)
	v1 := appendFeedRecord(nil, feedRecordV1, ticks, changes, len(changes), nil, nil)
	f.Add(v1)
	f.Add(appendFeedRecord(nil, feedRecordV2, ticks, changes[:1], 1, nil, nil))
	f.Add(appendFeedRecord(nil, feedRecordV2, ticks, changes, len(changes), nil, nil)) // a transaction's, on memory
	f.Add(compressFeedRecord(new(commitContext), v1, 0))
	v4 := appendFeedRecord(nil, feedRecordV4, ticks, changes, len(changes), nil, nil)
	f.Add(v4)
	f.Add(compressFeedRecord(new(commitContext), v4, 0))
	// The entities that records of version 4 name are looked up, in an
	// engine that holds one of them.
	eng := memory.New(nil)
	b := eng.NewBatch()
	if err := b.Set(changes[3].key, changes[3].new); err != nil {
		f.Fatal(err)
	}
	if err := b.Commit(false); err != nil {
		f.Fatal(err)
	}
	look := &feedLookup{ctx: context.Background(), r: eng}
	f.Fuzz(func(t *testing.T, rec []byte) {
		n := 0
		_, err := decodeFeedRecord(keyenc.FeedKey(1), rec, 0, func(*Change) bool { n++; return true })
		if _, lerr := decodeFeed(look, keyenc.FeedKey(1), rec, 0, func(*Change) bool { return true }); err != nil && lerr == nil {
			t.Fatalf("a record that does not decode (%v) decodes with its entities looked up", err)
		}
		if err != nil || rec[0] != feedRecordV1 && rec[0] != feedRecordV4 {
			return
		}
		z := compressFeedRecord(new(commitContext), rec, 0)
		m := 0
		if _, err := decodeFeedRecord(keyenc.FeedKey(1), z, 0, func(*Change) bool { m++; return true }); err != nil || m != n {
			t.Fatalf("version %d of a record of version %d reads %d changes of %d: %v", z[0], rec[0], m, n, err)
		}
		if z[0] != rec[0] {
			_, w := uvarint(rec[9:])
			if body, err := snappy.Decode(nil, z[9+w:]); err != nil || string(body) != string(rec[9+w:]) {
				t.Fatalf("version %d holds other changes: %v", z[0], err)
			}
		}
	})
}

// insertChanges returns n inserts into table, of entities p/r000… of two
// properties, stamped at ticks, as a commit's contributors see them.
func insertChanges(table string, n int, ticks int64) []change {
	var changes []change
	for i := range n {
		changes = append(changes, change{kind: changeInsert, table: table,
			key: keyenc.AppendEntityKey(nil, 3, "p", fmt.Sprintf("r%03d", i)),
			new: appendRecord(nil, ticks, Properties{"Name": StringValue("a customer name"), "N": Int32Value(int32(i))})})
	}
	return changes
}
