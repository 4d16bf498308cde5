package localtable_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/sharedmem"
)

// openFeedAccounts opens two Accounts with a feed on store, as two
// processes sharing it, and creates table Fed through the first.
func openFeedAccounts(t *testing.T, store *sharedmem.Store) (writer, watcher *localtable.Account) {
	t.Helper()
	var as []*localtable.Account
	for range 2 {
		a, err := localtable.Open(&localtable.Options{Engine: store.Open(), Feed: &localtable.FeedOptions{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		as = append(as, a)
	}
	if _, err := as[0].CreateTable(context.Background(), "Fed"); err != nil {
		t.Fatal(err)
	}
	return as[0], as[1]
}

// watchOther inserts n entities through writer, each once the watcher on
// the other account has received the one before (after drop, if set, has
// run before each third insert), and fails if a change does not arrive
// within 20 seconds.
func watchOther(t *testing.T, writer, watcher *localtable.Account, n int, drop func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rev, err := writer.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan localtable.Change)
	errc := make(chan error, 1)
	go func() {
		for c, err := range watcher.Watch(ctx, &localtable.WatchOptions{After: rev}) {
			if err != nil {
				errc <- err
				return
			}
			select {
			case got <- c:
			case <-ctx.Done():
				return
			}
		}
		errc <- ctx.Err()
	}()
	tbl := writer.Table("Fed")
	for i := range n {
		if drop != nil && i%3 == 1 {
			drop()
		}
		if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(rev, "-", i)}); err != nil {
			t.Fatal(err)
		}
		select {
		case c := <-got:
			if c.Entity.RowKey != fmt.Sprint(rev, "-", i) || c.Revision != rev+localtable.Revision(i+1) {
				t.Fatalf("change %d: revision %d, row %q", i, c.Revision, c.Entity.RowKey)
			}
		case err := <-errc:
			t.Fatalf("the watch ended before change %d: %v", i, err)
		case <-ctx.Done():
			t.Fatalf("the watcher on the other account did not receive change %d", i)
		}
	}
}

// TestFeedNotifiedByEngine checks that a watcher learns of another
// account's commits (another process's, on a shared engine) through the
// engine's notifications (storage.ChangeNotifier), not by polling: with
// the polling made hourly, it still receives each change, including those
// committed right after the store dropped its watches (the watcher reads
// again when a watch is lost and when it is set up again).
func TestFeedNotifiedByEngine(t *testing.T) {
	defer localtable.SetFeedPoll(time.Hour)()
	store := sharedmem.New()
	writer, watcher := openFeedAccounts(t, store)
	watchOther(t, writer, watcher, 12, nil)
	watchOther(t, writer, watcher, 12, store.DropWatches)
}

// TestFeedPollsWithoutNotifications checks the fallback: on a shared
// engine that cannot notify, a watcher still receives another account's
// commits, by polling.
func TestFeedPollsWithoutNotifications(t *testing.T) {
	defer localtable.SetFeedPoll(10 * time.Millisecond)()
	store := sharedmem.New()
	store.NotifyErr = errors.New("no notifications")
	writer, watcher := openFeedAccounts(t, store)
	watchOther(t, writer, watcher, 12, nil)
}
