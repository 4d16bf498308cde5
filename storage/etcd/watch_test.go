package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// TestFeedFailover kills the cluster's leader, then restarts it, while two
// Accounts on one prefix write and a feed watcher on each follows the
// feed: both see the same sequence, gapless, holding every acknowledged
// write once, no refused one, and those of unknown outcome at most once.
func TestFeedFailover(t *testing.T) {
	prefix := newPrefix("feed-failover")
	var accounts []*localtable.Account
	for range 2 {
		a, err := localtable.Open(&localtable.Options{Engine: openEngine(t, &etcd.Options{Prefix: prefix}), Feed: &localtable.FeedOptions{}})
		must(t, err)
		t.Cleanup(func() { a.Close() })
		accounts = append(accounts, a)
	}
	_, err := accounts[0].CreateTable(bg(), "Failover")
	must(t, err)
	ctx, cancel := context.WithTimeout(bg(), 3*time.Minute)
	defer cancel()
	seen := make([][]string, 2)
	var wwg sync.WaitGroup
	for m, a := range accounts {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			var after localtable.Revision
			for resumed := 0; ; resumed++ {
				for c, err := range a.Watch(ctx, &localtable.WatchOptions{After: after}) {
					if err != nil {
						if resumed > 20 || ctx.Err() != nil {
							t.Errorf("watcher %d: %v", m, err)
							return
						}
						t.Logf("watcher %d resumes after %d: %v", m, after, err)
						break
					}
					if c.Revision != after+1 {
						t.Errorf("watcher %d: revision %d after %d", m, c.Revision, after)
						return
					}
					after = c.Revision
					seen[m] = append(seen[m], fmt.Sprintf("%v %s/%s", c.Kind, c.Entity.PartitionKey, c.Entity.RowKey))
					if c.Entity.PartitionKey == "end" {
						return
					}
				}
			}
		}()
	}
	var (
		stop    atomic.Bool
		mu      sync.Mutex
		outcome = map[string]error{} // row: the write's error
		acked   atomic.Int32
		wg      sync.WaitGroup
	)
	for w, a := range accounts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tbl := a.Table("Failover")
			for i := 0; !stop.Load(); i++ {
				pk, rk := fmt.Sprintf("w%d", w), fmt.Sprintf("%05d", i)
				_, err := tbl.Insert(bg(), localtable.Entity{PartitionKey: pk, RowKey: rk})
				if err == nil {
					acked.Add(1)
				}
				mu.Lock()
				outcome[pk+"/"+rk] = err
				mu.Unlock()
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	m := testCluster.leader()
	if m == nil {
		t.Fatal("the cluster has no leader")
	}
	t.Logf("killing the leader, %s", m.name)
	m.kill()
	time.Sleep(3 * time.Second)
	must(t, m.start())
	before := acked.Load()
	for deadline := time.Now().Add(60 * time.Second); acked.Load() < before+4 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	_, err = accounts[1].Table("Failover").Insert(bg(), localtable.Entity{PartitionKey: "end", RowKey: "end"})
	must(t, err)
	wwg.Wait()
	if t.Failed() {
		return
	}
	if !slices.Equal(seen[0], seen[1]) {
		t.Fatalf("the watchers saw different sequences (%d and %d changes)", len(seen[0]), len(seen[1]))
	}
	inFeed := map[string]int{}
	for _, s := range seen[0][1 : len(seen[0])-1] {
		inFeed[strings.TrimPrefix(s, "Insert ")]++
	}
	var nAcked, nUnknown, nRefused int
	for row, err := range outcome {
		n := inFeed[row]
		delete(inFeed, row)
		switch {
		case err == nil:
			nAcked++
			if n != 1 {
				t.Errorf("acknowledged %s is %d times in the feed", row, n)
			}
		case errors.Is(err, storage.ErrCommitUnknown):
			nUnknown++
			if n > 1 {
				t.Errorf("%s, of unknown outcome, is %d times in the feed", row, n)
			}
		default:
			nRefused++
			if n != 0 {
				t.Errorf("%s, refused (%v), is in the feed", row, err)
			}
		}
	}
	if len(inFeed) > 0 {
		t.Errorf("the feed holds writes nobody made: %v", inFeed)
	}
	t.Logf("%d changes; writes: %d acknowledged, %d of unknown outcome, %d refused", len(seen[0]), nAcked, nUnknown, nRefused)
}
