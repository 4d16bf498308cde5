package pebble

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	pdb "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// fill commits n keys k00000… with 100-byte values, without sync, and
// flushes them into table files.
func fill(t *testing.T, d *DB, prefix string, n int) {
	t.Helper()
	val := make([]byte, 100)
	b := d.NewBatch()
	for i := range n {
		if err := b.Set(fmt.Appendf(nil, "%s%06d", prefix, i), val); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestBloomFilters checks that the table files carry Bloom filters and
// that a read of an absent key is answered by them: Pebble counts a
// filter hit for each table file a filter excludes.
func TestBloomFilters(t *testing.T) {
	d, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fill(t, d, "k", 5000)
	before := d.db.Metrics().Filter
	for i := range 1000 {
		// Absent keys inside the file's key range, so that only the
		// filter can exclude them.
		if _, _, err := d.Get(fmt.Appendf(nil, "k%06dx", i)); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("absent key: %v", err)
		}
	}
	after := d.db.Metrics().Filter
	if hits := after.Hits - before.Hits; hits < 900 {
		t.Errorf("%d filter hits for 1000 reads of absent keys (misses %d): the table files have no Bloom filter", hits, after.Misses-before.Misses)
	}
}

// TestOpenWithoutFilters opens a store made with Pebble's defaults (no
// filters, an 8 MiB cache: the options of localtable before filters),
// as stores made by earlier builds are, and reads it; then the other way
// round, a store written with filters opened by Pebble's defaults.
func TestOpenWithoutFilters(t *testing.T) {
	dir := t.TempDir()
	old, err := pdb.Open(dir, &pdb.Options{FS: vfs.Default, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if err := old.Set(fmt.Appendf(nil, "k%06d", i), []byte("old"), pdb.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir, nil)
	if err != nil {
		t.Fatalf("a store without filters: %v", err)
	}
	fill(t, d, "n", 1000) // tables with filters beside those without
	for _, k := range []string{"k000000", "k000999", "n000500"} {
		if _, c, err := d.Get([]byte(k)); err != nil {
			t.Errorf("get %s: %v", k, err)
		} else {
			c.Close()
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	back, err := pdb.Open(dir, &pdb.Options{FS: vfs.Default, Logger: quietLogger{}})
	if err != nil {
		t.Fatalf("Pebble's defaults on a store with filters: %v", err)
	}
	defer back.Close()
	if v, c, err := back.Get([]byte("n000999")); err != nil || len(v) != 100 {
		t.Errorf("get n000999 with Pebble's defaults: %d bytes, %v", len(v), err)
	} else {
		c.Close()
	}
}

// TestCompact checks that Compact drops what deletions and overwrites
// left behind, and keeps what is live.
func TestCompact(t *testing.T) {
	d, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const n = 20000
	size := func() uint64 {
		var s uint64
		for _, l := range d.db.Metrics().Levels {
			s += uint64(l.TablesSize)
		}
		return s
	}
	fill(t, d, "k", n)
	once := size()     // every value once, in one flushed table
	fill(t, d, "k", n) // every value twice, until a compaction
	b := d.NewBatch()
	if err := b.DeleteRange([]byte("k000000"), []byte(fmt.Sprintf("k%06d", n/2))); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	before := size()
	if err := d.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	after := size()
	// Live: half the keys of one fill. The tables before Compact hold at
	// least one fill (two, unless a background compaction already merged
	// them), so the measure is against one fill's table, which no
	// background work can shrink before it is taken.
	if after*4 > once*3 {
		t.Errorf("tables of %d bytes for one fill, %d before Compact, %d after: want at most 3/4 of one fill", once, before, after)
	}
	it, err := d.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for ok := it.First(); ok; ok = it.Next() {
		got++
	}
	it.Close()
	if got != n/2 {
		t.Errorf("%d keys after Compact, want %d", got, n/2)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(t.Context()); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Compact on a closed DB: %v", err)
	}
}

// TestTableFilesOneFirstByte checks the span policy (fileSpans): keys
// of several first bytes, written in one batch and flushed together, and
// then compacted, lie in table files that each hold one first byte.
func TestTableFilesOneFirstByte(t *testing.T) {
	d, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	val := make([]byte, 100)
	for round := range 3 {
		b := d.NewBatch()
		for _, first := range "efgi" {
			for i := range 500 {
				if err := b.Set(fmt.Appendf(nil, "%c%02d%06d", first, round, i), val); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	flushedAndCompacted(t, d, func(when string) {
		files := 0
		for _, lf := range tableFiles(t, d) {
			l, f := lf.l, lf.f
			files++
			if lo, hi := f.Smallest.UserKey, f.Largest.UserKey; lo[0] != hi[0] {
				t.Errorf("%s: L%d file %s holds keys %q to %q: two first bytes", when, l, f.FileNum, lo, hi)
			}
		}
		if files < 4 {
			t.Errorf("%s: %d table files for keys of 4 first bytes", when, files)
		}
	})
}

// levelFile is a table file of d and its level.
type levelFile struct {
	l int
	f pdb.SSTableInfo
}

// tableFiles returns d's table files, with their levels.
func tableFiles(t *testing.T, d *DB) []levelFile {
	t.Helper()
	levels, err := d.db.SSTables()
	if err != nil {
		t.Fatal(err)
	}
	var files []levelFile
	for l, tables := range levels {
		for _, f := range tables {
			files = append(files, levelFile{l, f})
		}
	}
	return files
}

// flushedAndCompacted runs check on d as it is (flushed), then once d is
// compacted.
func flushedAndCompacted(t *testing.T, d *DB, check func(when string)) {
	t.Helper()
	check("flushed")
	if err := d.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	check("compacted")
}

// TestLogFilesOneSegment checks the span policy's log segments
// (logSpans): the keys of a log (the change feed's records, its images'
// markers), written across segments in one batch with a pruning's range
// deletion and flushed together, then compacted, lie in table files that
// each hold one segment.
func TestLogFilesOneSegment(t *testing.T) {
	d, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	val := make([]byte, 100)
	for round := range 3 {
		b := d.NewBatch()
		from := uint64(round*1000 + 1<<16 - 1500) // across the first segment's end
		if err := b.DeleteRange(keyenc.FeedKey(uint64(round*100)), keyenc.FeedKey(uint64(round*100+100))); err != nil {
			t.Fatal(err)
		}
		for rev := from; rev < from+1000; rev++ {
			if err := b.Set(keyenc.FeedKey(rev), val); err != nil {
				t.Fatal(err)
			}
			if err := b.Set(keyenc.FeedImageGCKey(nil, rev, keyenc.FeedImageKey(nil, []byte("e-entity"), 1)), nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	segment := func(k []byte) (string, bool) {
		for _, p := range logPrefixes {
			if bytes.HasPrefix(k, p) {
				return string(k[:min(len(k), len(p)+logSegmentBytes)]), true
			}
		}
		return "", false
	}
	flushedAndCompacted(t, d, func(when string) {
		files := 0
		for _, lf := range tableFiles(t, d) {
			l, f := lf.l, lf.f
			lo, hi := f.Smallest.UserKey, f.Largest.UserKey
			slo, ok := segment(lo)
			if !ok {
				continue
			}
			files++
			// A range deletion's end bounds its file exclusively: it
			// may be the next segment's start.
			shi, _ := segment(hi)
			if slo != shi && !(f.Largest.IsExclusiveSentinel() && bytes.Equal(hi, logSpanEnd(lo))) {
				t.Errorf("%s: L%d file %s holds keys %x to %x: two segments of a log", when, l, f.FileNum, lo, hi)
			}
		}
		if files < 4 {
			t.Errorf("%s: %d table files for two logs' keys across two segments", when, files)
		}
	})
}

// TestLogSpanEnd: the end of a log key's segment: the prefix and the
// next segment's bytes (below every key of that segment).
func TestLogSpanEnd(t *testing.T) {
	for _, c := range []struct {
		key, want []byte
	}{
		{keyenc.FeedKey(0), keyenc.FeedKey(1 << 16)[:7]},
		{keyenc.FeedKey(1<<16 - 1), keyenc.FeedKey(1 << 16)[:7]},
		{keyenc.FeedKey(5<<32 + 7<<16 + 3), keyenc.FeedKey(5<<32 + 8<<16)[:7]},
		{keyenc.FeedKey(1<<64 - 1), nil},                                           // the last segment
		{keyenc.FeedImageGCPrefix(1 << 16), keyenc.FeedImageGCPrefix(2 << 16)[:8]}, // markers
		{[]byte("f\x00\x01"), nil},                                                 // too short to name a segment
		{[]byte("e-entity-key"), nil},                                              // no log's
		{keyenc.FeedImageKey(nil, []byte("e-entity-key"), 1), nil},                 // an image, not a marker
	} {
		if got := logSpanEnd(c.key); !bytes.Equal(got, c.want) {
			t.Errorf("logSpanEnd(%x) = %x, want %x", c.key, got, c.want)
		}
	}
}
