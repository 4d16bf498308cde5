package storagetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/localtable/localtable/storage"
)

func testGetSetDelete(t *testing.T, e storage.Engine) {
	commit(t, e, set("k1", "v1"), set("k2", "v2"))
	wantGet(t, e, "k1", "v1")
	wantGet(t, e, "k2", "v2")
	commit(t, e, del("k1"))
	wantAbsent(t, e, "k1")
	wantGet(t, e, "k2", "v2")
	wantScan(t, e, []KV{{"k2", "v2"}})
	// Deleting an absent key is not an error and changes nothing.
	commit(t, e, del("k1"), del("zz"))
	wantScan(t, e, []KV{{"k2", "v2"}})
}

func testNotFound(t *testing.T, e storage.Engine) {
	for _, r := range []storage.Reader{e, mustSnapshot(t, e)} {
		v, c, err := r.Get(bs("missing"))
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get(missing) = %q, %v; want ErrNotFound", v, err)
		}
		if c != nil {
			t.Errorf("Get(missing) returned a non-nil closer")
		}
	}
	commit(t, e, set("a", "1"))
	// Prefixes and extensions of a present key are different keys.
	wantAbsent(t, e, "")
	wantAbsent(t, e, "a\x00")
	wantAbsent(t, e, "A")
	wantGet(t, e, "a", "1")
}

func mustSnapshot(t testing.TB, e storage.Engine) storage.Snapshot {
	t.Helper()
	s, err := e.NewSnapshot()
	if err != nil {
		t.Fatalf("NewSnapshot: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func testOverwrite(t *testing.T, e storage.Engine) {
	commit(t, e, set("k", "old"))
	commit(t, e, set("k", "new"))
	wantGet(t, e, "k", "new")
	commit(t, e, set("k", "a much longer value than before"))
	wantGet(t, e, "k", "a much longer value than before")
	commit(t, e, set("k", ""))
	wantGet(t, e, "k", "")
	wantScan(t, e, []KV{{"k", ""}})
}

func testEmptyValue(t *testing.T, e storage.Engine) {
	b := e.NewBatch()
	defer b.Close()
	if err := b.Set(bs("nilval"), nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(bs("emptyval"), []byte{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	// An empty value is present, not absent.
	wantGet(t, e, "nilval", "")
	wantGet(t, e, "emptyval", "")
	wantScan(t, e, []KV{{"emptyval", ""}, {"nilval", ""}})
}

func testBinaryKeys(t *testing.T, e storage.Engine) {
	kvs := []KV{
		{"\x00", "zero"},
		{"\x00\x00", "zero zero"},
		{"\x00\xff", "zero ff"},
		{"a", "a"},
		{"a\x00", "a zero"},
		{"a\x00\x00", "a zero zero"},
		{"a\x01", "a one"},
		{"a\xff", "a ff"},
		{"b", "\x00\xff binary value\x00"},
		{"\xff", "ff"},
		{"\xff\x00", "ff zero"},
		{"\xff\xff", "ff ff"},
		{"\xff\xff\xff", "ff ff ff"},
	}
	// Commit in a scrambled order; the engine must sort bytewise.
	perm := []int{7, 2, 12, 0, 9, 4, 11, 1, 8, 3, 10, 6, 5}
	var ops []op
	for _, i := range perm {
		ops = append(ops, set(kvs[i].K, kvs[i].V))
	}
	commit(t, e, ops...)
	for _, kv := range kvs {
		wantGet(t, e, kv.K, kv.V)
	}
	wantScan(t, e, kvs)
	wantScanBounds(t, e, bs("a\x00"), bs("a\xff"), kvs[4:7])
	wantScanBounds(t, e, bs("\xff"), nil, kvs[9:])
	wantScanBounds(t, e, nil, bs("\x00\xff"), kvs[:2])
	wantScanBounds(t, e, bs("\xff\xff"), bs("\xff\xff\xff\xff"), kvs[11:])
	commit(t, e, delRange("\x00", "a\x00"))
	wantScan(t, e, kvs[4:])
	commit(t, e, delRange("a\xff", "\xff\xff\xff\x00"))
	wantScan(t, e, kvs[4:7])
}

func testBatchOrdering(t *testing.T, e storage.Engine) {
	commit(t, e, set("pre", "old"), set("r1", "x"), set("r2", "x"), set("r5", "x"))
	commit(t, e,
		set("k", "v"), del("k"), // set then delete: absent
		del("pre"), set("pre", "new"), // delete then set: present
		set("twice", "1"), set("twice", "2"), // last set wins
		delRange("r0", "r9"), set("r3", "inside"), // range delete then set inside
		set("s3", "x"), delRange("s0", "s9"), // set then range delete: absent
	)
	wantAbsent(t, e, "k")
	wantGet(t, e, "pre", "new")
	wantGet(t, e, "twice", "2")
	wantGet(t, e, "r3", "inside")
	wantAbsent(t, e, "r1")
	wantAbsent(t, e, "s3")
	wantScan(t, e, []KV{{"pre", "new"}, {"r3", "inside"}, {"twice", "2"}})
}

func testBatchAtomicity(t *testing.T, e storage.Engine) {
	commit(t, e, set("a", "0"), set("b", "0"))
	before := mustSnapshot(t, e)
	it := newIter(t, e, nil, nil) // opened before the commit
	defer it.Close()

	batch := e.NewBatch()
	defer batch.Close()
	apply(t, batch, set("a", "1"), set("b", "1"), set("c", "1"), del("zz"), delRange("x", "y"))
	if got := batch.Len(); got != 5 {
		t.Errorf("Len() = %d, want 5", got)
	}
	// Nothing of an uncommitted batch is visible.
	wantGet(t, e, "a", "0")
	wantAbsent(t, e, "c")
	wantScan(t, e, []KV{{"a", "0"}, {"b", "0"}})
	if err := batch.Commit(false); err != nil {
		t.Fatal(err)
	}
	// All of it is visible at once afterwards.
	wantScan(t, e, []KV{{"a", "1"}, {"b", "1"}, {"c", "1"}})
	// Neither a snapshot nor an iterator taken before sees any of it.
	wantScan(t, before, []KV{{"a", "0"}, {"b", "0"}})
	if diff := kvSliceEqual(scanIter(t, it, false), []KV{{"a", "0"}, {"b", "0"}}); !diff {
		t.Errorf("iterator opened before Commit saw the batch")
	}

	// A batch closed without Commit is discarded.
	discard := e.NewBatch()
	apply(t, discard, set("a", "discarded"), set("d", "discarded"))
	if err := discard.Close(); err != nil {
		t.Errorf("Close uncommitted: %v", err)
	}
	wantScan(t, e, []KV{{"a", "1"}, {"b", "1"}, {"c", "1"}})
}

func testBatchLifecycle(t *testing.T, e storage.Engine) {
	b := e.NewBatch()
	if b.Len() != 0 {
		t.Errorf("new batch Len() = %d", b.Len())
	}
	apply(t, b, set("k", "v"))
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(false); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("second Commit = %v, want ErrClosed", err)
	}
	if err := b.Set(bs("k2"), bs("v")); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Set after Commit = %v, want ErrClosed", err)
	}
	if err := b.Delete(bs("k")); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Delete after Commit = %v, want ErrClosed", err)
	}
	if err := b.DeleteRange(bs("a"), bs("z")); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("DeleteRange after Commit = %v, want ErrClosed", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close after Commit = %v, want nil", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	wantScan(t, e, []KV{{"k", "v"}})

	c := e.NewBatch()
	apply(t, c, set("other", "v"))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(false); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Commit after Close = %v, want ErrClosed", err)
	}
	wantScan(t, e, []KV{{"k", "v"}})

	// An empty batch commits.
	empty := e.NewBatch()
	defer empty.Close()
	if err := empty.Commit(false); err != nil {
		t.Errorf("empty Commit: %v", err)
	}
	wantScan(t, e, []KV{{"k", "v"}})
}

func testDeleteRange(t *testing.T, e storage.Engine) {
	all := []KV{{"a", "1"}, {"b", "2"}, {"b\x00", "2.0"}, {"c", "3"}, {"d", "4"}, {"e", "5"}}
	reset := func() {
		commit(t, e, delRange("\x00", "\xff\xff"))
		commitKVs(t, e, all)
	}
	cases := []struct {
		start, end string
		want       []KV
	}{
		{"b", "d", []KV{{"a", "1"}, {"d", "4"}, {"e", "5"}}},                                   // start inclusive, end exclusive
		{"b", "b\x00", []KV{{"a", "1"}, {"b\x00", "2.0"}, {"c", "3"}, {"d", "4"}, {"e", "5"}}}, // exactly one key
		{"a0", "c0", []KV{{"a", "1"}, {"d", "4"}, {"e", "5"}}},                                 // bounds between keys
		{"c", "c", all},              // empty range
		{"d", "b", all},              // reversed range: empty
		{"f", "z", all},              // past the last key
		{"", "a", all},               // before the first key
		{"", "z", nil},               // everything
		{"a", "e", []KV{{"e", "5"}}}, // up to the last key, exclusive
		{"e", "e\x00", []KV{{"a", "1"}, {"b", "2"}, {"b\x00", "2.0"}, {"c", "3"}, {"d", "4"}}},
	}
	for _, tc := range cases {
		reset()
		commit(t, e, delRange(tc.start, tc.end))
		t.Run(fmt.Sprintf("%q-%q", tc.start, tc.end), func(t *testing.T) {
			wantScan(t, e, tc.want)
			for _, kv := range all {
				if inRange(bs(tc.start), bs(tc.end))(kv) {
					wantAbsent(t, e, kv.K)
				}
			}
		})
	}

	// nil bounds are the empty key, not unbounded: DeleteRange(nil, "c")
	// removes keys below "c", DeleteRange("c", nil) is empty.
	reset()
	b := e.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(nil, bs("c")); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteRange(bs("c"), nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	wantScan(t, e, all[3:])
}

func testSyncCommit(t *testing.T, e storage.Engine) {
	b := e.NewBatch()
	defer b.Close()
	apply(t, b, set("durable", "yes"))
	if err := b.Commit(true); err != nil {
		t.Fatalf("Commit(true): %v", err)
	}
	wantGet(t, e, "durable", "yes")
	if s, ok := e.(storage.Syncer); ok {
		commit(t, e, set("later", "x"))
		if err := s.Sync(); err != nil {
			t.Errorf("Sync: %v", err)
		}
		wantGet(t, e, "later", "x")
	}
}

func testBufferOwnership(t *testing.T, e storage.Engine) {
	key, val := bs("key1"), bs("value1")
	b := e.NewBatch()
	defer b.Close()
	if err := b.Set(key, val); err != nil {
		t.Fatal(err)
	}
	// Reusing the buffers after Set but before Commit changes nothing.
	copy(key, "XXXX")
	copy(val, "YYYYYY")
	rs, re := bs("r0"), bs("r9")
	if err := b.DeleteRange(rs, re); err != nil {
		t.Fatal(err)
	}
	copy(rs, "\x00\x00")
	copy(re, "\xff\xff")
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	copy(key, "ZZZZ")
	copy(val, "WWWWWW")
	wantScan(t, e, []KV{{"key1", "value1"}})

	// The value returned by Get survives later writes of the same key,
	// for as long as its closer is not closed.
	v, c, err := e.Get(bs("key1"))
	if err != nil {
		t.Fatal(err)
	}
	commit(t, e, set("key1", "other!"))
	if string(v) != "value1" {
		t.Errorf("Get value changed by a later commit: %q", v)
	}
	c.Close()
	wantGet(t, e, "key1", "other!")

	// Iterator bounds are copied.
	commitKVs(t, e, alphabet)
	lo, hi := bs("b"), bs("d")
	it := newIter(t, e, lo, hi)
	defer it.Close()
	copy(lo, "a")
	copy(hi, "z")
	if got := scanIter(t, it, false); !kvSliceEqual(got, alphabet[1:3]) {
		t.Errorf("iterator bounds not copied: got %v, want %v", got, alphabet[1:3])
	}
	// The seek key may be reused after SeekGE.
	seek := bs("c")
	wantAt(t, it, it.SeekGE(seek), "SeekGE(c)", "c", "3")
	copy(seek, "a")
	wantAt(t, it, true, "after reusing seek key", "c", "3")
}

// testStableReads checks the promise of an engine that implements
// storage.StableReader and reports stable reads: keys and values it
// returned are unchanged after their closers and iterators are closed and
// the keys are overwritten, deleted and range-deleted. Other engines skip
// it.
func testStableReads(t *testing.T, e storage.Engine) {
	if s, ok := e.(storage.StableReader); !ok || !s.StableReads() {
		t.Skip("the engine does not promise stable reads")
	}
	commitKVs(t, e, alphabet)
	v, c, err := e.Get(bs("b"))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	var keys, vals [][]byte
	it := newIter(t, e, nil, nil)
	for ok := it.First(); ok; ok = it.Next() {
		keys, vals = append(keys, it.Key()), append(vals, it.Value())
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	commit(t, e, set("b", "changed"), del("c"), delRange("a", "z"), set("d", "again"))
	if string(v) != "2" {
		t.Errorf("Get value changed to %q", v)
	}
	var got []KV
	for i := range keys {
		got = append(got, KV{string(keys[i]), string(vals[i])})
	}
	if !kvSliceEqual(got, alphabet) {
		t.Errorf("iterated pairs changed to %v, want %v", got, alphabet)
	}
}
