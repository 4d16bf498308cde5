package memory

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/storagetest"
)

// The conformance suite, with log prefixes that its keys fall under: keys
// written in order stay logs, the others make their prefix fall back. An
// empty prefix makes the whole engine one log; a prefix of 0xff has an
// unbounded range.
func TestLogConformance(t *testing.T) {
	for name, logs := range map[string][][]byte{
		"prefixes": {[]byte("a"), []byte("k"), []byte("n0"), {0xff}},
		"all":      {{}},
	} {
		t.Run(name, func(t *testing.T) {
			storagetest.Run(t, func(t *testing.T) storage.Engine {
				return New(&Options{Logs: logs, Degree: 2})
			})
		})
	}
}

func TestNewLogDefs(t *testing.T) {
	defs := newLogDefs([][]byte{[]byte("fa"), []byte("b"), []byte("f"), {}, {0xff, 0xff}, []byte("f")})
	// The empty prefix covers every other.
	if len(defs) != 1 || len(defs[0].prefix) != 0 || defs[0].end != nil {
		t.Fatalf("defs = %q", defs)
	}
	defs = newLogDefs([][]byte{[]byte("fa"), []byte("b"), []byte("f"), {0xff, 0xff}, []byte("f"), {'a', 0xff}})
	var got []string
	for _, d := range defs {
		got = append(got, fmt.Sprintf("%x-%x", d.prefix, d.end))
	}
	want := []string{"61ff-62", "62-63", "66-67", "ffff-"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("defs = %v, want %v", got, want)
	}
}

// logKey is a key of a log: prefix p and a big-endian n, as the change
// feed's.
func logKey(p byte, n uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{p}, n)
}

// A feed-like workload (a record per commit beside an entity, pruned
// from the front by range) keeps the log's keys out of the tree, and
// snapshots and iterators taken on the way keep seeing what they saw.
func TestLogStaysOutOfTree(t *testing.T) {
	e := New(&Options{Logs: [][]byte{{'f'}}})
	defer e.Close()
	m := e.(*memEngine)
	type held struct {
		s    storage.Snapshot
		want string
	}
	var snaps []held
	for i := uint64(1); i <= 5000; i++ {
		b := e.NewBatch()
		b.Set(fmt.Appendf(nil, "t%06d", i), []byte("entity"))
		b.Set(logKey('f', i), fmt.Appendf(nil, "rec%d", i))
		if i%1024 == 0 {
			b.DeleteRange(logKey('f', 0), logKey('f', i-1500))
		}
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		if i%700 == 0 {
			s, err := e.NewSnapshot()
			if err != nil {
				t.Fatal(err)
			}
			snaps = append(snaps, held{s, dump(t, s, nil)})
		}
	}
	if m.wlogs[0].off {
		t.Fatal("the log fell back")
	}
	if n := m.w.Len(); n != 5000 {
		t.Errorf("the tree holds %d items, want the 5000 entities only", n)
	}
	if n := m.wlogs[0].items.n; n != 5000-(4096-1500)+1 {
		t.Errorf("the log holds %d items", n)
	}
	for _, h := range snaps {
		if got := dump(t, h.s, nil); got != h.want {
			t.Error("a snapshot changed")
		}
		h.s.Close()
	}
	if v, _, err := e.Get(logKey('f', 4000)); err != nil || string(v) != "rec4000" {
		t.Errorf("Get = %q, %v", v, err)
	}
	if _, _, err := e.Get(logKey('f', 10)); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Get of a pruned key: %v", err)
	}
}

// dump returns every pair within the bounds, in order, forward and
// backward, as one string.
func dump(t testing.TB, r storage.Reader, opts *storage.IterOptions) string {
	t.Helper()
	it, err := r.NewIter(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var buf bytes.Buffer
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Fprintf(&buf, "%x=%x ", it.Key(), it.Value())
	}
	buf.WriteString("| ")
	for ok := it.Last(); ok; ok = it.Prev() {
		fmt.Fprintf(&buf, "%x ", it.Key())
	}
	return buf.String()
}

// logDiff drives an engine with logs and a plain one alike and compares
// every read.
type logDiff struct {
	t      *testing.T
	r      *rand.Rand
	e, p   storage.Engine
	next   [2]uint64 // the next key of logs 'f' and 'h'
	low    [2]uint64 // below it, nothing was written
	broken [2]bool   // a write off the pattern was made
	breaks bool      // writes off the pattern are made
	ops    []string  // the writes of the batch being made, to report
	snaps  [][2]storage.Snapshot
	cps    [][2]storage.Checkpoint
}

var logPrefixes = [2]byte{'f', 'h'}

// key returns a key to read or bound by: of the logs (present or not)
// or of the tree, on either side of them and between.
func (d *logDiff) key() []byte {
	switch d.r.IntN(6) {
	case 0, 1:
		j := d.r.IntN(2)
		return logKey(logPrefixes[j], d.low[j]+d.r.Uint64N(d.next[j]-d.low[j]+2))
	case 2:
		return []byte{"efghi"[d.r.IntN(5)]}
	case 3:
		return nil
	default:
		return d.treeKey()
	}
}

func (d *logDiff) treeKey() []byte {
	return fmt.Appendf(nil, "%c%02d", "aegiz"[d.r.IntN(5)], d.r.IntN(40))
}

// write adds a random write to both batches.
func (d *logDiff) write(be, bp storage.Batch) {
	j := d.r.IntN(2)
	p := logPrefixes[j]
	var set, del, end []byte
	rng := false
	n := d.r.IntN(100)
	if !d.breaks && (n >= 78 && n < 81) {
		n = 0
	}
	switch {
	case n < 40: // an append
		d.next[j] += 1 + d.r.Uint64N(3)
		set = logKey(p, d.next[j])
	case n < 55:
		set = d.treeKey()
	case n < 62:
		del = d.treeKey()
	case n < 70: // a pruning from the front, maybe from a tree key below
		cut := d.low[j] + d.r.Uint64N(d.next[j]-d.low[j]+2)
		del, end, rng = []byte{p}, logKey(p, cut), true
		if d.r.IntN(3) == 0 {
			del = d.treeKey()
		}
		d.low[j] = max(d.low[j], cut)
	case n < 74: // a deletion at the back, maybe to a tree key above
		del, end, rng = logKey(p, d.next[j]-d.r.Uint64N(3)), []byte{p + 1}, true
		if d.r.IntN(3) == 0 {
			end = d.treeKey()
		}
	case n < 78: // deletion of the first or the last key
		// The last appended is the last key, or gone; the first key as
		// committed is the first, or gone, in this batch too.
		del = logKey(p, d.next[j])
		if it, _ := d.p.NewIter(&storage.IterOptions{LowerBound: []byte{p}, UpperBound: []byte{p + 1}}); it != nil {
			if d.r.IntN(2) == 0 && it.First() {
				del = bytes.Clone(it.Key())
			}
			it.Close()
		}
		if d.breaks && d.r.IntN(3) == 0 { // in the middle, maybe
			del = logKey(p, d.low[j]+d.r.Uint64N(d.next[j]-d.low[j]+2))
			d.broken[j] = true
		}
	case n < 80: // any range
		del, end, rng = d.key(), d.key(), true
		d.broken[0], d.broken[1] = true, true
	case n < 81: // out of order: below the last, or over it
		set = logKey(p, d.next[j]-d.r.Uint64N(3))
		d.broken[j] = true
	default:
		set = d.treeKey()
	}
	val := fmt.Appendf(nil, "v%d", d.r.IntN(1000))
	d.ops = append(d.ops, fmt.Sprintf("n=%d set=%x del=%x end=%x rng=%v", n, set, del, end, rng))
	for _, b := range []storage.Batch{be, bp} {
		switch {
		case set != nil:
			b.Set(set, val)
		case rng:
			b.DeleteRange(del, end)
		default:
			b.Delete(del)
		}
	}
}

// compareIter opens an iterator on each reader with the same random
// bounds and makes the same random moves on both.
func (d *logDiff) compareIter(re, rp storage.Reader) {
	t := d.t
	t.Helper()
	var opts *storage.IterOptions
	if d.r.IntN(4) > 0 {
		opts = &storage.IterOptions{LowerBound: d.key(), UpperBound: d.key()}
	}
	ie, err1 := re.NewIter(opts)
	ip, err2 := rp.NewIter(opts)
	if err1 != nil || err2 != nil {
		t.Fatalf("NewIter: %v, %v", err1, err2)
	}
	defer ie.Close()
	defer ip.Close()
	var trace []string
	for range 30 {
		var ok1, ok2 bool
		switch n := d.r.IntN(10); {
		case n == 0:
			trace = append(trace, "First")
			ok1, ok2 = ie.First(), ip.First()
		case n == 1:
			trace = append(trace, "Last")
			ok1, ok2 = ie.Last(), ip.Last()
		case n == 2:
			k := d.key()
			trace = append(trace, fmt.Sprintf("SeekGE(%x)", k))
			ok1, ok2 = ie.SeekGE(k), ip.SeekGE(k)
		case n < 7:
			trace = append(trace, "Next")
			ok1, ok2 = ie.Next(), ip.Next()
		default:
			trace = append(trace, "Prev")
			ok1, ok2 = ie.Prev(), ip.Prev()
		}
		if ok1 != ok2 || ok1 != ie.Valid() || ok1 && (!bytes.Equal(ie.Key(), ip.Key()) || !bytes.Equal(ie.Value(), ip.Value())) {
			var b []byte
			if opts != nil {
				b = fmt.Appendf(nil, "[%x, %x)", opts.LowerBound, opts.UpperBound)
			}
			t.Fatalf("iterator %s after %v: logs %v %x, plain %v %x", b, trace, ok1, ie.Key(), ok2, ip.Key())
		}
	}
}

func (d *logDiff) compareGet(re, rp storage.Reader) {
	k := d.key()
	v1, _, err1 := re.Get(k)
	v2, _, err2 := rp.Get(k)
	if !errors.Is(err1, err2) || !bytes.Equal(v1, v2) {
		d.t.Fatalf("Get(%x): logs %q, %v; plain %q, %v", k, v1, err1, v2, err2)
	}
}

// step makes one random move: a batch, reads, a snapshot, a checkpoint
// or a restore.
func (d *logDiff) step() {
	t := d.t
	switch n := d.r.IntN(100); {
	case n < 50:
		be, bp := d.e.NewBatch(), d.p.NewBatch()
		m := d.e.(*memEngine)
		was := [2]bool{m.wlogs[0].off, m.wlogs[1].off}
		d.ops = nil
		for range 1 + d.r.IntN(4) {
			d.write(be, bp)
		}
		if err := be.Commit(false); err != nil {
			t.Fatal(err)
		}
		for j := range 2 {
			if !was[j] && m.wlogs[j].off && !d.broken[j] {
				t.Logf("log %d fell back on %v; before: %s", j, d.ops, dump(t, d.p, &storage.IterOptions{LowerBound: []byte{logPrefixes[j]}, UpperBound: []byte{logPrefixes[j] + 1}}))
			}
		}
		if err := bp.Commit(false); err != nil {
			t.Fatal(err)
		}
	case n < 65:
		d.compareIter(d.e, d.p)
	case n < 75:
		d.compareGet(d.e, d.p)
	case n < 80:
		se, err1 := d.e.NewSnapshot()
		sp, err2 := d.p.NewSnapshot()
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		d.snaps = append(d.snaps, [2]storage.Snapshot{se, sp})
	case n < 90:
		if len(d.snaps) > 0 {
			s := d.snaps[d.r.IntN(len(d.snaps))]
			d.compareIter(s[0], s[1])
			d.compareGet(s[0], s[1])
		}
	case n < 93:
		if len(d.snaps) > 0 {
			i := d.r.IntN(len(d.snaps))
			d.snaps[i][0].Close()
			d.snaps[i][1].Close()
			d.snaps = append(d.snaps[:i], d.snaps[i+1:]...)
		}
	case n < 96:
		ce, err1 := d.e.(storage.Checkpointer).Checkpoint()
		cp, err2 := d.p.(storage.Checkpointer).Checkpoint()
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		d.cps = append(d.cps, [2]storage.Checkpoint{ce, cp})
	default:
		if len(d.cps) > 0 {
			c := d.cps[d.r.IntN(len(d.cps))]
			if err := d.e.(storage.Checkpointer).Restore(c[0]); err != nil {
				t.Fatal(err)
			}
			if err := d.p.(storage.Checkpointer).Restore(c[1]); err != nil {
				t.Fatal(err)
			}
			// The counters stay: later appends are above every key
			// written so far, so still in order.
		}
	}
}

// The engine with logs reads as a plain one under random writes that
// mostly follow the pattern of a log (appends, prunings from the front,
// deletions at the back) and now and then break it, with tree keys on
// both sides of and between two logs, snapshots and checkpoints taken on
// the way and read later, and iterators with random bounds and moves.
// Logs whose pattern was never broken must still be logs at the end.
func TestLogDifferential(t *testing.T) {
	rounds, steps := 60, 600
	if testing.Short() {
		rounds = 10
	}
	kept := 0
	defer func(n int) { logChunkShift = n }(logChunkShift)
	for round := range rounds {
		// Chunks of 1, 2, 4 and 8 items, and of the engine's size: the
		// appends, prunings, deletions at the back, snapshots and
		// restores fall on every place of a chunk and across its edges.
		logChunkShift = []int{0, 1, 2, 3, 10}[round%5]
		d := &logDiff{
			t: t,
			r: rand.New(rand.NewPCG(uint64(round), 7)),
			e: New(&Options{Logs: [][]byte{{'f'}, {'h'}}, Degree: 2}),
			p: New(&Options{Degree: 2}),
			// Half the rounds break the pattern now and then.
			breaks: round%2 == 1,
		}
		for range steps {
			d.step()
		}
		m := d.e.(*memEngine)
		for j := range 2 {
			if !d.broken[j] {
				kept++
				if m.wlogs[j].off {
					t.Errorf("round %d: log %c fell back with no write off its pattern", round, logPrefixes[j])
				}
			}
		}
		if got, want := dump(t, d.e, nil), dump(t, d.p, nil); got != want {
			t.Fatalf("round %d: contents differ:\n%s\n%s", round, got, want)
		}
		for _, s := range d.snaps {
			s[0].Close()
			s[1].Close()
		}
		for _, c := range d.cps {
			c[0].Release()
			c[1].Release()
		}
		d.e.Close()
		d.p.Close()
	}
	if kept < rounds {
		t.Errorf("only %d logs of %d rounds kept their pattern: the test hardly tests logs", kept, 2*rounds)
	}
}

// Readers of a log (iterators on the engine and on snapshots, Gets)
// run while a writer appends to it and prunes its front: each sees a
// contiguous run of keys in order, and a snapshot reads the same twice.
func TestLogConcurrentReaders(t *testing.T) {
	// Chunks of 8 items: readers cross their edges all the time.
	defer func(n int) { logChunkShift = n }(logChunkShift)
	logChunkShift = 3
	e := New(&Options{Logs: [][]byte{{'f'}}})
	defer e.Close()
	const writes = 20000
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for i := uint64(1); i <= writes; i++ {
			b := e.NewBatch()
			b.Set(logKey('f', i), logKey('v', i))
			b.Set(fmt.Appendf(nil, "g%03d", i%500), []byte("x"))
			if i%100 == 0 {
				b.DeleteRange([]byte{'f'}, logKey('f', i-300))
			}
			if err := b.Commit(false); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	check := func(r storage.Reader) string {
		it, err := r.NewIter(&storage.IterOptions{LowerBound: []byte{'e'}, UpperBound: []byte{'g', '1'}})
		if err != nil {
			t.Error(err)
			return ""
		}
		defer it.Close()
		var prev uint64
		var buf bytes.Buffer
		for ok := it.First(); ok; ok = it.Next() {
			k := it.Key()
			if k[0] != 'f' {
				buf.Write(k)
				continue
			}
			n := binary.BigEndian.Uint64(k[1:])
			if prev != 0 && n != prev+1 || !bytes.Equal(it.Value(), logKey('v', n)) {
				t.Errorf("key %d after %d, value %x", n, prev, it.Value())
				return ""
			}
			prev = n
			fmt.Fprint(&buf, n, " ")
		}
		return buf.String()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				check(e)
				s, err := e.NewSnapshot()
				if err != nil {
					t.Error(err)
					return
				}
				if a, b := check(s), check(s); a != b {
					t.Error("a snapshot read differently twice")
				}
				s.Close()
				if _, _, err := e.Get(logKey('f', 1)); err != nil && !errors.Is(err, storage.ErrNotFound) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if e.(*memEngine).wlogs[0].off {
		t.Error("the log fell back")
	}
}

// TestLogAppendAfterBackDeletion: once keys are deleted from a log's
// back, a key above the new last but below the deleted ones is still an
// append (the log must not compare it with a last key it no longer
// holds, which would make it fall back), and one below the new last is
// not.
func TestLogAppendAfterBackDeletion(t *testing.T) {
	e := New(&Options{Logs: [][]byte{{'f'}}})
	defer e.Close()
	m := e.(*memEngine)
	commit := func(f func(b storage.Batch)) {
		t.Helper()
		b := e.NewBatch()
		f(b)
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	for i := uint64(1); i <= 10; i++ {
		commit(func(b storage.Batch) { b.Set(logKey('f', i), []byte("v")) })
	}
	commit(func(b storage.Batch) { b.DeleteRange(logKey('f', 8), logKey('f', 11)) })
	commit(func(b storage.Batch) { b.Set(logKey('f', 9), []byte("again")) })
	if m.wlogs[0].off {
		t.Fatal("an append after a deletion at the back made the log fall back")
	}
	if n := m.wlogs[0].items.n; n != 8 {
		t.Fatalf("the log holds %d items, want 8", n)
	}
	commit(func(b storage.Batch) { b.Set(logKey('f', 5), []byte("over")) })
	if !m.wlogs[0].off {
		t.Fatal("a write below the log's last key did not make it fall back")
	}
	if got := dump(t, e, nil); got != dumpOf(t, map[uint64]string{1: "v", 2: "v", 3: "v", 4: "v", 5: "over", 6: "v", 7: "v", 9: "again"}) {
		t.Errorf("after the fallback: %s", got)
	}
}

// dumpOf is dump of an engine holding the log keys of vals.
func dumpOf(t *testing.T, vals map[uint64]string) string {
	e := New(nil)
	defer e.Close()
	b := e.NewBatch()
	for k, v := range vals {
		b.Set(logKey('f', k), []byte(v))
	}
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	return dump(t, e, nil)
}
