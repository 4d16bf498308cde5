package localtable

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
)

// oldStoreEntity is entity i of the store in testdata/store-record-v1,
// which a localtable that wrote version 1 entity records made: 300
// entities in table Old, with an index ByScore on Score.
func oldStoreEntity(i int) Entity {
	p := Properties{
		"Name":  StringValue(fmt.Sprintf("name %d", i)),
		"Score": DoubleValue(float64(i) / 10),
		"Age":   Int32Value(int32(i % 90)),
		"Big":   Int64Value(math.MaxInt64 - int64(i)),
		"On":    BoolValue(i%2 == 0),
		"When":  DateTimeValue(time.Date(2020, 1, 1, 0, 0, i, 0, time.UTC)),
		"Id":    GUIDValue(MustParseGUID("4185404a-5818-48c3-b9be-f217df0dba6f")),
		"Bin":   BinaryValue([]byte{byte(i), 1, 2}),
	}
	if i%7 == 0 {
		p["Long"] = StringValue(string(make([]byte, 300)))
	}
	if i%11 == 0 {
		p = Properties{}
	}
	return Entity{PartitionKey: fmt.Sprintf("p%d", i%3), RowKey: fmt.Sprintf("r%03d", i), Properties: p}
}

// TestRecordV1Store opens a pebble store whose entities were written in
// record version 1 by an earlier localtable, and reads and writes it with
// this one: every read path (Get, a scan's filter, a filter through the
// index, Rows, Verify) reads the old records, and a write rewrites one in
// version 2 beside them.
func TestRecordV1Store(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/store-record-v1")); err != nil {
		t.Fatal(err)
	}
	eng, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	versions := func() map[byte]int {
		t.Helper()
		it, err := eng.NewIter(&storage.IterOptions{LowerBound: []byte{keyenc.PrefixEntity}, UpperBound: []byte{keyenc.PrefixEntity + 1}})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		n := map[byte]int{}
		for ok := it.First(); ok; ok = it.Next() {
			n[it.Value()[0]]++
		}
		return n
	}
	if n := versions(); n[recordV1] != 300 || len(n) != 1 {
		t.Fatalf("the old store's record versions: %v; want 300 of version 1", n)
	}
	format := func() []byte {
		t.Helper()
		v, c, err := eng.Get(metaFormat)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return append([]byte(nil), v...)
	}
	if f := format(); string(f) != string(encodeFormat(1)) {
		t.Fatalf("the old store's format: %x, want 1", f)
	}
	a, err := Open(&Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// Open raised the store's format, so that an older localtable refuses
	// it rather than misread the records this one writes.
	if f := format(); string(f) != string(encodeFormat(formatVersion)) {
		t.Errorf("the store's format after Open: %x, want %d", f, formatVersion)
	}
	tbl := a.Table("Old")
	for i := range 300 {
		want := oldStoreEntity(i)
		got, err := tbl.Get(ctx, want.PartitionKey, want.RowKey, nil)
		if err != nil || !propsEqual(got.Properties, want.Properties) {
			t.Fatalf("Get %d: %v, %v; want %v", i, got.Properties, err, want.Properties)
		}
	}
	count := func(p Predicate) int {
		t.Helper()
		n := 0
		for _, err := range tbl.QueryAll(ctx, &QueryOptions{Filter: p}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	// Through the index on Score, and by a scan reading Age in each record.
	if n := count(indexEq{"Score", DoubleValue(12.3)}); n != 1 {
		t.Errorf("Score eq 12.3: %d entities, want 1", n)
	}
	if n := count(indexEq{"Age", Int32Value(5)}); n != 3 { // 5, 95, 185, 275 less 275 (i%11)
		t.Errorf("Age eq 5: %d entities, want 3", n)
	}
	rows := 0
	for r, err := range tbl.Rows(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		var i int
		fmt.Sscanf(r.RowKey(), "r%d", &i)
		want := oldStoreEntity(i)
		for name, v := range want.Properties {
			if got, ok := r.Property(name); !ok || !got.Equal(v) {
				t.Fatalf("row %d: %s = %v, %v; want %v", i, name, got, ok, v)
			}
		}
		rows++
	}
	if rows != 300 {
		t.Errorf("Rows: %d, want 300", rows)
	}
	verifyOK(t, a)
	// A merge reads the old record and writes the new version.
	if _, err := tbl.Update(ctx, Entity{PartitionKey: "p1", RowKey: "r001", Properties: Properties{"New": Int32Value(1)}}, &UpdateOptions{Mode: UpdateModeMerge}); err != nil {
		t.Fatal(err)
	}
	got, err := tbl.Get(ctx, "p1", "r001", nil)
	want := oldStoreEntity(1).Properties
	want["New"] = Int32Value(1)
	if err != nil || !propsEqual(got.Properties, want) {
		t.Errorf("after the merge: %v, %v; want %v", got.Properties, err, want)
	}
	if n := versions(); n[recordV1] != 299 || n[recordVersion] != 1 {
		t.Errorf("record versions after the merge: %v; want 299 of version 1 and 1 of version %d", n, recordVersion)
	}
	verifyOK(t, a)
}

// propsEqual reports whether two property sets are equal, value by value.
func propsEqual(a, b Properties) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !w.Equal(v) {
			return false
		}
	}
	return true
}
