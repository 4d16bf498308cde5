package localtable

import (
	"context"
	"reflect"
	"testing"
	"unsafe"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
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
	v1 := appendFeedRecord(nil, feedRecordV1, ticks, changes, len(changes))
	v2 := appendFeedRecord(nil, feedRecordV2, ticks, changes, len(changes))
	if v1[0] != feedRecordV1 || v2[0] != feedRecordV2 || len(v2) != len(v1)+2*keyenc.TablePrefixLen {
		t.Fatalf("versions %d and %d written, of %d and %d bytes", v1[0], v2[0], len(v1), len(v2))
	}
	tail := append(append([]byte(nil), k1...), rec...)
	if string(v2[len(v2)-len(tail):]) != string(tail) {
		t.Errorf("the record does not end with its last entity's key and record")
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

// TestFeedNestsSingleWrites: on the memory engine, the write of a commit
// of one entity is nested in its feed record (one buffer holds both); a
// transaction's are not (its record holds many entities).
func TestFeedNestsSingleWrites(t *testing.T) {
	ctx := context.Background()
	eng := memory.New(nil)
	a, err := Open(&Options{Engine: eng, Feed: &FeedOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tbl, err := a.CreateTable(ctx, "Tbl")
	if err != nil {
		t.Fatal(err)
	}
	id := a.cat.Load().byName["tbl"].id
	if _, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: "one", Properties: Properties{"N": Int32Value(1)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Transact(ctx, []Action{
		{Type: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: "two"}},
		{Type: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: "three"}},
	}); err != nil {
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
	if len(feed) != 3 || feed[0][0] != feedRecordV1 || feed[1][0] != feedRecordV2 || feed[2][0] != feedRecordV1 {
		t.Fatalf("feed records of versions %v; want the table's 1, the insert's 2, the transaction's 1", func() (vs []byte) {
			for _, f := range feed {
				vs = append(vs, f[0])
			}
			return vs
		}())
	}
	within := func(v []byte) bool {
		p := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
		for _, f := range feed {
			if s := uintptr(unsafe.Pointer(unsafe.SliceData(f))); p >= s && p < s+uintptr(len(f)) {
				return true
			}
		}
		return false
	}
	for rk, want := range map[string]bool{"one": true, "two": false, "three": false} {
		v, _, err := eng.Get(keyenc.AppendEntityKey(nil, id, "p", rk))
		if err != nil {
			t.Fatal(rk, err)
		}
		if got := within(v); got != want {
			t.Errorf("entity %s stored in a feed record's buffer: %v, want %v", rk, got, want)
		}
	}
	var _ storage.NestedSetter = eng.NewBatch().(storage.NestedSetter)
}
