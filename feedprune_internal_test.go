package localtable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
)

// rangeLogEngine is an engine whose batches record the ranges they
// delete.
type rangeLogEngine struct {
	storage.Engine
	mu     sync.Mutex
	ranges [][2][]byte
}

func (e *rangeLogEngine) NewBatch() storage.Batch {
	return &rangeLogBatch{Batch: e.Engine.NewBatch(), e: e}
}

type rangeLogBatch struct {
	storage.Batch
	e      *rangeLogEngine
	ranges [][2][]byte
}

func (b *rangeLogBatch) DeleteRange(start, end []byte) error {
	b.ranges = append(b.ranges, [2][]byte{bytes.Clone(start), bytes.Clone(end)})
	return b.Batch.DeleteRange(start, end)
}

func (b *rangeLogBatch) Commit(sync bool) error {
	if err := b.Batch.Commit(sync); err != nil {
		return err
	}
	b.e.mu.Lock()
	b.e.ranges = append(b.e.ranges, b.ranges...)
	b.e.mu.Unlock()
	return nil
}

// under returns the committed ranges whose start is a key of n bytes
// with prefix p (a pruning's: a Restore's deletion of the whole feed is
// not one), from the from-th on.
func (e *rangeLogEngine) under(p []byte, n, from int) [][2][]byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	var rs [][2][]byte
	for _, r := range e.ranges {
		if bytes.HasPrefix(r[0], p) && len(r[0]) == n {
			rs = append(rs, r)
		}
	}
	return rs[min(from, len(rs)):]
}

// TestFeedPruneFromLastCut: each pruning deletes the feed's records and
// its images' markers from where the previous one ended, not from
// revision 0, so that its range deletion spans only what it deletes
// (see feedLog.pruned); after a reopen or a Restore (which keeps the
// feed), from the oldest record kept.
// Replaces make pebble's feed keep images, and so markers.
func TestFeedPruneFromLastCut(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() (*Account, *rangeLogEngine) {
		t.Helper()
		db, err := pebble.Open(dir, &pebble.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		e := &rangeLogEngine{Engine: db}
		a, err := Open(&Options{Engine: e, Feed: &FeedOptions{KeepChanges: 2000}})
		if err != nil {
			t.Fatal(err)
		}
		if !a.feed.refs {
			t.Fatal("the feed keeps no images on this engine")
		}
		return a, e
	}
	write := func(a *Account, rounds int) {
		t.Helper()
		tbl, err := a.CreateTable(ctx, "Things")
		if errors.Is(err, ErrTableExists) {
			tbl, err = a.Table("Things"), nil
		}
		if err != nil {
			t.Fatal(err)
		}
		acts := make([]Action, 100)
		for round := range rounds {
			for i := range acts {
				acts[i] = Action{Type: ActionUpsertReplace, Entity: Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%03d", i),
					Properties: Properties{"Round": Int64Value(int64(round))}}}
			}
			if _, err := tbl.Transact(ctx, acts); err != nil {
				t.Fatal(err)
			}
		}
	}
	// contiguous checks that the prunings of the keys start is one of
	// (from the from-th on) follow each other, the first from start, and
	// returns the last one's end.
	contiguous := func(e *rangeLogEngine, start []byte, from int) []byte {
		t.Helper()
		p := start[:1]
		if start[0] == keyenc.PrefixFeedImage {
			p = start[:2]
		}
		rs := e.under(p, len(start), from)
		if len(rs) < 2 {
			t.Fatalf("%d prunings under %q: the test writes too little", len(rs), p)
		}
		for i, r := range rs {
			if i == 0 && !bytes.Equal(r[0], start) {
				t.Errorf("under %q, the first pruning deletes from %x, not %x", p, r[0], start)
			}
			if i > 0 && !bytes.Equal(r[0], rs[i-1][1]) {
				t.Errorf("under %q, pruning %d deletes from %x, not from where the previous one ended (%x)", p, i, r[0], rs[i-1][1])
			}
		}
		return rs[len(rs)-1][1]
	}
	a, e := open()
	write(a, 60)
	feedEnd := contiguous(e, keyenc.FeedKey(0), 0)
	markEnd := contiguous(e, keyenc.FeedImageGCPrefix(0), 0)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopened: from the oldest record and marker kept, which are at or
	// after where the last pruning ended.
	a, e = open()
	defer a.Close()
	firstRec, firstMark := a.feed.pruned, a.feed.markFrom
	if k := keyenc.FeedKey(uint64(firstRec)); bytes.Compare(k, feedEnd) < 0 {
		t.Errorf("reopened, the oldest record is at %x, below the last pruning's end %x", k, feedEnd)
	}
	if k := keyenc.FeedImageGCPrefix(uint64(firstMark)); bytes.Compare(k, markEnd) < 0 {
		t.Errorf("reopened, the oldest marker is at %x, below the last pruning's end %x", k, markEnd)
	}
	cp, err := a.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	write(a, 40)
	contiguous(e, keyenc.FeedKey(uint64(firstRec)), 0)
	contiguous(e, keyenc.FeedImageGCPrefix(uint64(firstMark)), 0)

	// Restored: the feed is kept across a Restore (its history goes on),
	// and the prunings go on from its oldest record and marker, which
	// load reads again.
	nRec := len(e.under([]byte{keyenc.PrefixFeed}, 9, 0))
	nMark := len(e.under(keyenc.FeedImageGCPrefix(0)[:2], 10, 0))
	wasRec, wasMark := a.feed.pruned, a.feed.markFrom
	if err := a.Restore(ctx, cp); err != nil {
		t.Fatal(err)
	}
	firstRec, firstMark = a.feed.pruned, a.feed.markFrom
	if firstRec < wasRec || firstMark < wasMark {
		t.Errorf("restored, the oldest record and marker are %d and %d, below the last pruning's end %d and %d", firstRec, firstMark, wasRec, wasMark)
	}
	write(a, 40)
	contiguous(e, keyenc.FeedKey(uint64(firstRec)), nRec)
	contiguous(e, keyenc.FeedImageGCPrefix(uint64(firstMark)), nMark)

	// The feed still reads whole, from its oldest kept change on.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := 0
	var last Revision
	for c, err := range a.Watch(wctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if last != 0 && c.Revision != last+1 {
			t.Fatalf("change %d follows %d", c.Revision, last)
		}
		last = c.Revision
		if n++; n == 2000 {
			break
		}
	}
}
