package memory_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
)

func set(t *testing.T, e storage.Engine, kv ...string) {
	t.Helper()
	b := e.NewBatch()
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			b.Delete([]byte(kv[i]))
		} else {
			b.Set([]byte(kv[i]), []byte(kv[i+1]))
		}
	}
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
}

func contents(t *testing.T, r storage.Reader) string {
	t.Helper()
	it, err := r.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	s := ""
	for ok := it.First(); ok; ok = it.Next() {
		s += fmt.Sprintf("%s=%s ", it.Key(), it.Value())
	}
	return s
}

func TestMemoryCheckpoint(t *testing.T) {
	e := memory.New(&memory.Options{Degree: 2}) // deep trees: copy-on-write paths
	cpr := e.(storage.Checkpointer)
	for i := range 20 {
		set(t, e, fmt.Sprintf("k%02d", i), "a")
	}
	want := contents(t, e)
	cp, err := cpr.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	set(t, e, "k03", "b", "k05", "", "k99", "c")
	snap, _ := e.NewSnapshot()
	defer snap.Close()
	changed := contents(t, e)
	if changed == want {
		t.Fatal("writes did not change the contents")
	}
	for round := range 2 { // a checkpoint restores any number of times
		if err := cpr.Restore(cp); err != nil {
			t.Fatal(err)
		}
		if got := contents(t, e); got != want {
			t.Fatalf("round %d: after Restore\n got %s\nwant %s", round, got, want)
		}
		if got := contents(t, snap); got != changed {
			t.Fatalf("a snapshot taken before Restore changed: %s", got)
		}
		set(t, e, "k07", "d") // writes after Restore leave the checkpoint alone
	}
	if v, c, err := e.Get([]byte("k07")); err != nil || string(v) != "d" {
		t.Fatalf("Get after Restore and a write: %q %v", v, err)
	} else {
		c.Close()
	}

	other := memory.New(nil)
	if err := other.(storage.Checkpointer).Restore(cp); !errors.Is(err, storage.ErrForeignCheckpoint) {
		t.Fatalf("Restore into another engine: %v", err)
	}
	cp.Release()
	if err := cpr.Restore(cp); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("Restore of a released checkpoint: %v", err)
	}
	cp2, _ := cpr.Checkpoint()
	e.Close()
	if _, err := cpr.Checkpoint(); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("Checkpoint after Close: %v", err)
	}
	if err := cpr.Restore(cp2); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("Restore after Close: %v", err)
	}
}

// Restores race with readers and writers without a data race (run with
// -race) and each read sees one whole state.
func TestMemoryCheckpointConcurrent(t *testing.T) {
	e := memory.New(nil)
	cpr := e.(storage.Checkpointer)
	set(t, e, "a", "1", "b", "1")
	cp, _ := cpr.Checkpoint()
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				switch g {
				case 0:
					if err := cpr.Restore(cp); err != nil {
						t.Error(err)
						return
					}
				case 1:
					set(t, e, "a", "2", "b", "2")
				case 2:
					if s := contents(t, e); s != "a=1 b=1 " && s != "a=2 b=2 " {
						t.Errorf("read %d saw a mix: %s", i, s)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
