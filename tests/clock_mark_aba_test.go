package tests

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage"
)

// clockHookEngine runs hook on the n-th GetVersion of the clock's mark.
type clockHookEngine struct {
	*sharedmem.Engine
	n, calls int
	hook     func()
}

func (h *clockHookEngine) GetVersion(ctx context.Context, key []byte) ([]byte, storage.Version, io.Closer, error) {
	if bytes.Equal(key, keyenc.MetaKey("clock")) {
		h.calls++
		if h.calls == h.n && h.hook != nil {
			h.hook()
		}
	}
	return h.Engine.GetVersion(ctx, key)
}

func storedClockMark(t *testing.T, s *sharedmem.Store) time.Time {
	v, c, err := s.Open().Get(keyenc.MetaKey("clock"))
	tabletest.Must(t, err)
	defer c.Close()
	return localtable.TicksToTime(int64(binary.BigEndian.Uint64(v[:8]))) // ticks, then a nonce
}

// B writes the mark and lowers it back to exactly A's value between
// A's CommitIf and A's re-read. A must not take B's write for its own:
// if it did, its Close would lower the mark below the Timestamp B handed
// out, and a process restarted on a slow clock would stamp before it.
func TestClockSharedMarkNotTakenForOwn(t *testing.T) {
	s := sharedmem.New()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	w := &clockHookEngine{Engine: s.Open(), n: 2}
	a, err := localtable.Open(&localtable.Options{Engine: w, Clock: tabletest.NewFakeClock(t0).Now})
	tabletest.Must(t, err)
	b, err := localtable.Open(&localtable.Options{Engine: s.Open(), Clock: tabletest.NewFakeClock(t0.Add(500 * time.Millisecond)).Now})
	tabletest.Must(t, err)
	_, err = a.CreateTable(ctx, "Clk")
	tabletest.Must(t, err)
	var bStamp time.Time
	w.hook = func() { // after A's commit of the mark, before A's re-read
		_, err := b.Table("Clk").Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "b"})
		tabletest.Must(t, err)
		e, err := b.Table("Clk").Get(ctx, "p", "b", nil)
		tabletest.Must(t, err)
		bStamp = e.Timestamp
		tabletest.Must(t, b.Close())
		t.Logf("after B's close the mark is %v", storedClockMark(t, s))
	}
	_, err = a.Table("Clk").Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "a"})
	tabletest.Must(t, err)
	tabletest.Must(t, a.Close())
	mark := storedClockMark(t, s)
	t.Logf("B handed out %v; after A's close the mark is %v", bStamp, mark)
	if mark.Before(bStamp) {
		t.Errorf("mark %v lowered below B's Timestamp %v", mark, bStamp)
	}
	c, err := localtable.Open(&localtable.Options{Engine: s.Open(), Clock: tabletest.NewFakeClock(t0).Now})
	tabletest.Must(t, err)
	defer c.Close()
	_, err = c.Table("Clk").Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "c"})
	tabletest.Must(t, err)
	e, err := c.Table("Clk").Get(ctx, "p", "c", nil)
	tabletest.Must(t, err)
	if !e.Timestamp.After(bStamp) {
		t.Errorf("after a restart C stamps %v, not after B's %v", e.Timestamp, bStamp)
	}
}
