package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/etcd"
)

// receive waits for a signal of ch; it fails the test if ch is closed or
// nothing comes within 30 seconds.
func receive(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the channel was closed", what)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no signal within 30s", what)
	}
}

// closed waits for ch to be closed, draining signals; it fails the test
// after 60 seconds.
func closed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatalf("%s: the channel is still open after 60s", what)
		}
	}
}

func put(t *testing.T, e *etcd.Engine, key, val string) {
	t.Helper()
	b := e.NewBatch()
	must(t, b.Set([]byte(key), []byte(val)))
	must(t, b.Commit(true))
}

// TestNotifyChanges checks storage.ChangeNotifier on etcd: a watch made
// through one engine signals the commits of another engine (another
// process) on the prefix, each visible to a read after the signal, and is
// closed when its context ends or its engine closes.
func TestNotifyChanges(t *testing.T) {
	prefix := newPrefix("notify")
	watcher := openEngine(t, &etcd.Options{Prefix: prefix})
	writer := openEngine(t, &etcd.Options{Prefix: prefix})
	ctx, cancel := context.WithCancel(bg())
	ch, err := watcher.NotifyChanges(ctx, []byte("w/"))
	must(t, err)
	for i := range 5 {
		put(t, writer, fmt.Sprintf("w/%d", i), "v")
		receive(t, ch, fmt.Sprintf("write %d", i))
		if _, _, err := watcher.Get([]byte(fmt.Sprintf("w/%d", i))); err != nil {
			t.Fatalf("a read after the signal of write %d: %v", i, err)
		}
	}
	// A delete signals too, and a range deletion.
	b := writer.NewBatch()
	must(t, b.Delete([]byte("w/0")))
	must(t, b.Commit(true))
	receive(t, ch, "delete")
	b = writer.NewBatch()
	must(t, b.DeleteRange([]byte("w/1"), []byte("w/3")))
	must(t, b.Commit(true))
	receive(t, ch, "range deletion")
	cancel()
	closed(t, ch, "after its context ended")

	ch, err = watcher.NotifyChanges(bg(), []byte("w/"))
	must(t, err)
	must(t, watcher.Close())
	closed(t, ch, "after its engine closed")
	if _, err := watcher.NotifyChanges(bg(), []byte("w/")); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("NotifyChanges on a closed engine = %v, want ErrClosed", err)
	}
}

// openOn opens an engine on prefix whose client knows one member only.
func openOn(t *testing.T, m *member, prefix string) *etcd.Engine {
	t.Helper()
	e, err := etcd.Open(clientv3.Config{Endpoints: []string{m.cli.String()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()},
		&etcd.Options{Prefix: prefix, MaxTxnOps: testMaxTxnOps, MaxRequestBytes: testMaxRequestBytes})
	must(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}

// TestNotifyCompacted loses a watch the way etcd's client cannot recover
// from: the member it watches through stops, the others go on writing and
// compact, and when the member is back the client's resumption finds its
// revision compacted. The channel is closed, not left silent; and a feed
// watcher on that member, in an Account, still receives every change,
// gapless, by reading again.
func TestNotifyCompacted(t *testing.T) {
	m := testCluster.follower(nil)
	if m == nil {
		t.Fatal("no follower")
	}
	prefix := newPrefix("notify-compacted")
	we := openOn(t, m, prefix)
	watching, err := localtable.Open(&localtable.Options{Engine: we, Feed: &localtable.FeedOptions{}})
	must(t, err)
	t.Cleanup(func() { watching.Close() })
	writing := openEngine(t, &etcd.Options{Prefix: prefix})
	writer, err := localtable.Open(&localtable.Options{Engine: writing, Feed: &localtable.FeedOptions{}})
	must(t, err)
	t.Cleanup(func() { writer.Close() })
	tbl, err := writer.CreateTable(bg(), "Compacted")
	must(t, err)

	ch, err := we.NotifyChanges(bg(), []byte("x/"))
	must(t, err)
	ctx, cancel := context.WithTimeout(bg(), 2*time.Minute)
	defer cancel()
	got := make(chan localtable.Change, 100)
	go func() {
		defer close(got)
		var after localtable.Revision
		for resumed := 0; ; resumed++ {
			for c, err := range watching.Watch(ctx, &localtable.WatchOptions{After: after}) {
				if err != nil {
					// A read of the feed under way when the member
					// stopped finds its revision compacted: the watch
					// ends, and is resumed as Watch says.
					if !errors.Is(err, etcd.ErrCompacted) || resumed > 5 {
						t.Errorf("watch: %v", err)
						return
					}
					t.Logf("resuming after %d: %v", after, err)
					break
				}
				got <- c
				after = c.Revision
				if c.Entity.PartitionKey == "end" {
					return
				}
			}
			if ctx.Err() != nil {
				t.Errorf("watch: %v", ctx.Err())
				return
			}
		}
	}()
	insert := func(pk, rk string) {
		t.Helper()
		_, err := tbl.Insert(bg(), localtable.Entity{PartitionKey: pk, RowKey: rk})
		must(t, err)
	}
	insert("p", "before")
	m.kill()
	restarted := false
	defer func() {
		if !restarted {
			must(t, m.start())
		}
	}()
	for i := range 5 {
		insert("p", fmt.Sprint(i))
	}
	put(t, writing, "x/1", "v")
	cli := rawClient(t)
	resp, err := cli.Get(bg(), prefix, clientv3.WithCountOnly())
	must(t, err)
	_, err = cli.Compact(bg(), resp.Header.Revision)
	must(t, err)
	must(t, m.start())
	restarted = true
	closed(t, ch, "a watch resumed from a compacted revision")
	insert("end", "end")
	var rows []string
	for c := range got {
		if c.Revision != localtable.Revision(len(rows)+1) {
			t.Fatalf("change %d has revision %d: a gap or a duplicate", len(rows), c.Revision)
		}
		rows = append(rows, c.Entity.RowKey)
	}
	want := fmt.Sprint([]string{"", "before", "0", "1", "2", "3", "4", "end"})
	if fmt.Sprint(rows) != want {
		t.Errorf("the watcher saw rows %q, want %s", rows, want)
	}
}
