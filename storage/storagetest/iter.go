package storagetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/localtable/localtable/storage"
)

func testIterBounds(t *testing.T, e storage.Engine) {
	commitKVs(t, e, alphabet)
	cases := []struct {
		lower, upper []byte
	}{
		{nil, nil},
		{bs("b"), nil},
		{nil, bs("d")},
		{bs("b"), bs("d")},
		{bs("a"), bs("e")},
		{bs("a\x00"), bs("d\x00")}, // bounds between keys
		{bs("0"), bs("z")},         // bounds outside all keys
		{bs("c"), bs("c")},         // empty
		{bs("c"), bs("c\x00")},     // exactly one key
		{bs("f"), nil},             // after every key
		{nil, bs("a")},             // before every key
		{[]byte{}, bs("b")},        // empty lower bound: the empty key
		{bs("a"), []byte{}},        // empty upper bound: the empty key, so nothing
		{nil, []byte{}},            // and with no lower bound
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%q-%q", tc.lower, tc.upper), func(t *testing.T) {
			wantScanBounds(t, e, tc.lower, tc.upper, filter(alphabet, inRange(tc.lower, tc.upper)))
		})
	}
	// A nil *IterOptions is unbounded.
	it, err := e.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if got := scanIter(t, it, false); !kvSliceEqual(got, alphabet) {
		t.Errorf("NewIter(nil) scan = %v", got)
	}
}

func testIterMovement(t *testing.T, e storage.Engine) {
	commitKVs(t, e, alphabet) // a..e
	it := newIter(t, e, nil, nil)
	defer it.Close()

	wantAt(t, it, it.First(), "First", "a", "1")
	wantAt(t, it, it.Next(), "Next", "b", "2")
	wantAt(t, it, it.Next(), "Next", "c", "3")
	wantAt(t, it, it.Prev(), "Prev after Next", "b", "2")
	wantAt(t, it, it.Prev(), "Prev", "a", "1")
	wantInvalid(t, it, it.Prev(), "Prev at first")
	wantInvalid(t, it, it.Prev(), "Prev again before first")
	wantAt(t, it, it.Next(), "Next after exhausted backward", "a", "1")
	wantAt(t, it, it.Next(), "Next", "b", "2")

	wantAt(t, it, it.Last(), "Last", "e", "5")
	wantAt(t, it, it.Prev(), "Prev", "d", "4")
	wantAt(t, it, it.Next(), "Next after Prev", "e", "5")
	wantInvalid(t, it, it.Next(), "Next at last")
	wantInvalid(t, it, it.Next(), "Next again past last")
	wantAt(t, it, it.Prev(), "Prev after exhausted forward", "e", "5")
	wantAt(t, it, it.Prev(), "Prev", "d", "4")

	wantAt(t, it, it.SeekGE(bs("c")), "SeekGE(c)", "c", "3")
	wantAt(t, it, it.Prev(), "Prev after SeekGE", "b", "2")
	wantAt(t, it, it.SeekGE(bs("b\x00")), "SeekGE(b\\x00)", "c", "3")
	wantAt(t, it, it.Prev(), "Prev after inexact SeekGE", "b", "2")
	wantAt(t, it, it.Next(), "Next", "c", "3")
	wantAt(t, it, it.SeekGE(nil), "SeekGE(nil)", "a", "1")
	wantAt(t, it, it.SeekGE(bs("")), "SeekGE(empty)", "a", "1")
	wantInvalid(t, it, it.SeekGE(bs("e\x00")), "SeekGE past last")
	wantAt(t, it, it.Prev(), "Prev after SeekGE past last", "e", "5")
	wantInvalid(t, it, it.SeekGE(bs("\xff")), "SeekGE(ff)")
	wantAt(t, it, it.Last(), "Last after exhausted", "e", "5")
	wantAt(t, it, it.First(), "First from last", "a", "1")
	// Seeks backwards work.
	wantAt(t, it, it.SeekGE(bs("d")), "SeekGE(d)", "d", "4")
	wantAt(t, it, it.SeekGE(bs("a")), "SeekGE(a) backwards", "a", "1")

	// Alternate Next and Prev across the whole range.
	it.First()
	for _, want := range alphabet[1:] {
		wantAt(t, it, it.Next(), "zigzag Next", want.K, want.V)
		it.Prev()
		wantAt(t, it, it.Next(), "zigzag Next again", want.K, want.V)
	}

	// An unpositioned iterator: Next is First, Prev is Last.
	it2 := newIter(t, e, nil, nil)
	defer it2.Close()
	if it2.Valid() {
		t.Errorf("new iterator is Valid")
	}
	wantAt(t, it2, it2.Next(), "Next on unpositioned", "a", "1")
	it3 := newIter(t, e, nil, nil)
	defer it3.Close()
	wantAt(t, it3, it3.Prev(), "Prev on unpositioned", "e", "5")
}

func testIterOutOfBoundsSeek(t *testing.T, e storage.Engine) {
	commitKVs(t, e, alphabet) // a..e
	it := newIter(t, e, bs("b"), bs("d"))
	defer it.Close()

	wantAt(t, it, it.First(), "First", "b", "2")
	wantInvalid(t, it, it.Prev(), "Prev at lower bound")
	wantAt(t, it, it.Next(), "Next after Prev at lower bound", "b", "2")
	wantAt(t, it, it.Last(), "Last", "c", "3")
	wantInvalid(t, it, it.Next(), "Next at upper bound")
	wantAt(t, it, it.Prev(), "Prev after Next at upper bound", "c", "3")
	wantAt(t, it, it.SeekGE(bs("a")), "SeekGE below lower bound", "b", "2")
	wantAt(t, it, it.SeekGE(nil), "SeekGE(nil) below lower bound", "b", "2")
	wantInvalid(t, it, it.Prev(), "Prev after clamped SeekGE")
	wantInvalid(t, it, it.SeekGE(bs("d")), "SeekGE at upper bound")
	wantAt(t, it, it.Prev(), "Prev after SeekGE at upper bound", "c", "3")
	wantInvalid(t, it, it.SeekGE(bs("z")), "SeekGE above upper bound")
	wantAt(t, it, it.Prev(), "Prev after SeekGE above upper bound", "c", "3")
	wantAt(t, it, it.SeekGE(bs("c")), "SeekGE(c)", "c", "3")
	wantInvalid(t, it, it.Next(), "Next past upper bound")
	wantInvalid(t, it, it.Next(), "Next again past upper bound")
	wantAt(t, it, it.Last(), "Last", "c", "3")

	// Bounds between keys, and bounds with no key inside.
	it2 := newIter(t, e, bs("b\x00"), bs("c\x00"))
	defer it2.Close()
	wantAt(t, it2, it2.Last(), "Last", "c", "3")
	wantAt(t, it2, it2.First(), "First", "c", "3")
	wantInvalid(t, it2, it2.Next(), "Next")
	wantAt(t, it2, it2.Prev(), "Prev", "c", "3")
	wantInvalid(t, it2, it2.Prev(), "Prev")
	wantAt(t, it2, it2.SeekGE(bs("b")), "SeekGE(b)", "c", "3")

	it3 := newIter(t, e, bs("c\x00"), bs("d"))
	defer it3.Close()
	wantInvalid(t, it3, it3.First(), "First in empty bounds")
	wantInvalid(t, it3, it3.Last(), "Last in empty bounds")
	wantInvalid(t, it3, it3.SeekGE(bs("a")), "SeekGE in empty bounds")
	wantInvalid(t, it3, it3.Next(), "Next in empty bounds")
	wantInvalid(t, it3, it3.Prev(), "Prev in empty bounds")
}

func testIterClose(t *testing.T, e storage.Engine) {
	commitKVs(t, e, alphabet)
	it := newIter(t, e, nil, nil)
	wantAt(t, it, it.First(), "First", "a", "1")
	if err := it.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if it.First() || it.Valid() || it.SeekGE(bs("a")) || it.Next() || it.Prev() || it.Last() {
		t.Errorf("closed iterator can be positioned")
	}
	if err := it.Error(); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Error after Close = %v, want ErrClosed", err)
	}
	if err := it.Close(); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
}

func testEmptyEngine(t *testing.T, e storage.Engine) {
	wantAbsent(t, e, "a")
	for _, r := range []storage.Reader{e, mustSnapshot(t, e)} {
		it := newIter(t, r, nil, nil)
		wantInvalid(t, it, it.First(), "First")
		wantInvalid(t, it, it.Last(), "Last")
		wantInvalid(t, it, it.SeekGE(bs("a")), "SeekGE")
		wantInvalid(t, it, it.Next(), "Next")
		wantInvalid(t, it, it.Prev(), "Prev")
		if err := it.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		wantScanBounds(t, r, bs("a"), bs("z"), nil)
	}
	// Empty after deleting everything, too.
	commitKVs(t, e, alphabet)
	commit(t, e, delRange("a", "z"))
	wantScan(t, e, nil)
}

func testManyKeys(t *testing.T, e storage.Engine) {
	const n = 5000
	var all []KV
	for i := range n {
		kv := KV{fmt.Sprintf("key%06d", i*2), fmt.Sprintf("val%d", i)}
		all = append(all, kv)
	}
	// Insert in a scattered order, in several batches.
	for start := range 7 {
		batch := e.NewBatch()
		for i := start; i < n; i += 7 {
			apply(t, batch, set(all[i].K, all[i].V))
		}
		if err := batch.Commit(false); err != nil {
			t.Fatal(err)
		}
		batch.Close()
	}
	wantScan(t, e, all)
	snap := mustSnapshot(t, e)
	lo, hi := bs("key002000"), bs("key006001")
	wantScanBounds(t, e, lo, hi, filter(all, inRange(lo, hi)))

	// Seek to every odd (absent) key and step both ways.
	it := newIter(t, e, nil, nil)
	defer it.Close()
	for i := 0; i < n-1; i += 97 {
		k := fmt.Sprintf("key%06d", i*2+1)
		wantAt(t, it, it.SeekGE(bs(k)), "SeekGE("+k+")", all[i+1].K, all[i+1].V)
		wantAt(t, it, it.Prev(), "Prev", all[i].K, all[i].V)
	}

	commit(t, e, delRange(string(lo), string(hi)))
	wantScan(t, e, filter(all, func(kv KV) bool { return !inRange(lo, hi)(kv) }))
	wantScan(t, snap, all)
}
