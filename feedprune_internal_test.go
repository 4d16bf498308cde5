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

// under returns the committed ranges whose start has prefix p.
func (e *rangeLogEngine) under(p []byte) [][2][]byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	var rs [][2][]byte
	for _, r := range e.ranges {
		if bytes.HasPrefix(r[0], p) {
			rs = append(rs, r)
		}
	}
	return rs
}

// TestFeedPruneFromLastCut: each pruning deletes the feed's records and
// its images' markers from where the previous one ended, not from
// revision 0, so that its range deletion spans only what it deletes
// (see feedLog.pruned); after a reopen, from the oldest record kept.
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
	// contiguous checks that the ranges under p follow each other, the
	// first from start, and returns the last one's end.
	contiguous := func(e *rangeLogEngine, p, start []byte) []byte {
		t.Helper()
		rs := e.under(p)
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
	feedEnd := contiguous(e, []byte{keyenc.PrefixFeed}, keyenc.FeedKey(0))
	markEnd := contiguous(e, keyenc.FeedImageGCPrefix(0)[:2], keyenc.FeedImageGCPrefix(0))
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
	write(a, 40)
	contiguous(e, []byte{keyenc.PrefixFeed}, keyenc.FeedKey(uint64(firstRec)))
	contiguous(e, keyenc.FeedImageGCPrefix(0)[:2], keyenc.FeedImageGCPrefix(uint64(firstMark)))

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
