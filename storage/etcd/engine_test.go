package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/etcd"
	"github.com/localtable/localtable/storage/storagetest"
)

// TestConformance runs the storage conformance suite on the cluster, each
// subtest on an engine of its own prefix.
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Engine {
		return openEngine(t, nil)
	})
}

// TestConformanceSmallPages runs the suite with pages of two keys, so
// that every scan crosses many page boundaries in both directions. With
// -short it leaves out the two subtests of thousands of keys, which take
// half a minute so (TestConformance runs them over pages of the default
// size): a backward page costs etcd a read of the whole rest of the range.
func TestConformanceSmallPages(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Engine {
		if testing.Short() && (strings.HasSuffix(t.Name(), "/ManyKeys") || strings.HasSuffix(t.Name(), "/RandomModel")) {
			t.Skip("thousands of keys over two-key pages: not with -short")
		}
		return openEngine(t, &etcd.Options{PageSize: 2})
	})
}

// TestRawLayout pins how keys and values lie in etcd: the engine's key
// under the prefix, the value as given, nothing else; and that engines
// with different prefixes do not see each other's keys.
func TestRawLayout(t *testing.T) {
	a := openEngine(t, &etcd.Options{Prefix: newPrefix("layout-a")})
	b := openEngine(t, &etcd.Options{Prefix: newPrefix("layout-b")})
	for _, e := range []*etcd.Engine{a, b} {
		batch := e.NewBatch()
		must(t, batch.Set([]byte("k\x00\xff"), []byte("v-"+e.Prefix())))
		must(t, batch.Set([]byte(""), []byte("empty key")))
		must(t, batch.Commit(true))
	}
	cli := rawClient(t)
	resp, err := cli.Get(bg(), a.Prefix(), clientv3.WithPrefix())
	must(t, err)
	var got []string
	for _, kv := range resp.Kvs {
		got = append(got, fmt.Sprintf("%q=%q", kv.Key, kv.Value))
	}
	want := []string{
		fmt.Sprintf("%q=%q", a.Prefix(), "empty key"),
		fmt.Sprintf("%q=%q", a.Prefix()+"k\x00\xff", "v-"+a.Prefix()),
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("etcd holds %v, want %v", got, want)
	}
	// A full scan of a sees only its own keys, and a range deletion of
	// everything in a leaves b alone.
	if n := count(t, a); n != 2 {
		t.Errorf("engine a scans %d keys, want 2", n)
	}
	batch := a.NewBatch()
	must(t, batch.DeleteRange(nil, []byte("\xff\xff\xff")))
	must(t, batch.Commit(true))
	if n := count(t, a); n != 0 {
		t.Errorf("after DeleteRange engine a scans %d keys, want 0", n)
	}
	if n := count(t, b); n != 2 {
		t.Errorf("engine b scans %d keys, want 2", n)
	}
}

func count(t *testing.T, r storage.Reader) int {
	t.Helper()
	it, err := r.NewIter(nil)
	must(t, err)
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	must(t, it.Close())
	return n
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// TestLimits pins the checks of Options.MaxTxnOps and MaxRequestBytes,
// made before a batch is sent, and the mapping of the cluster's own
// refusal when the options claim more than the cluster allows: both fail
// with ErrTooLarge and apply nothing.
func TestLimits(t *testing.T) {
	t.Run("ops", func(t *testing.T) {
		e := openEngine(t, &etcd.Options{MaxTxnOps: 10})
		b := e.NewBatch()
		for i := range 11 {
			must(t, b.Set(fmt.Appendf(nil, "k%02d", i), []byte("v")))
		}
		err := b.Commit(true)
		if !errors.Is(err, etcd.ErrTooLarge) {
			t.Fatalf("Commit of 11 writes with MaxTxnOps 10 = %v, want ErrTooLarge", err)
		}
		if n := count(t, e); n != 0 {
			t.Errorf("%d keys written", n)
		}
		// Writes to one key count once: the batch is reduced to its net
		// effect before it is sent.
		b = e.NewBatch()
		for i := range 50 {
			must(t, b.Set([]byte("same"), fmt.Appendf(nil, "%d", i)))
		}
		must(t, b.Commit(true))
		if v, _, err := e.Get([]byte("same")); err != nil || string(v) != "49" {
			t.Errorf("Get(same) = %q, %v; want 49", v, err)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		e := openEngine(t, &etcd.Options{MaxRequestBytes: 1 << 20})
		b := e.NewBatch()
		must(t, b.Set([]byte("big"), make([]byte, 1<<20)))
		if err := b.Commit(true); !errors.Is(err, etcd.ErrTooLarge) {
			t.Fatalf("Commit of 1 MiB with MaxRequestBytes 1 MiB = %v, want ErrTooLarge", err)
		}
		if _, _, err := e.Get([]byte("big")); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get(big) = %v, want ErrNotFound", err)
		}
	})
	t.Run("cluster refuses", func(t *testing.T) {
		e := openEngine(t, &etcd.Options{MaxTxnOps: 10 * testMaxTxnOps, MaxRequestBytes: 4 * testMaxRequestBytes})
		b := e.NewBatch()
		for i := range testMaxTxnOps + 1 {
			must(t, b.Set(fmt.Appendf(nil, "k%05d", i), nil))
		}
		if err := b.Commit(true); !errors.Is(err, etcd.ErrTooLarge) {
			t.Errorf("Commit of %d writes to a cluster with --max-txn-ops=%d = %v, want ErrTooLarge", testMaxTxnOps+1, testMaxTxnOps, err)
		}
		b = e.NewBatch()
		must(t, b.Set([]byte("huge"), make([]byte, testMaxRequestBytes+1)))
		if err := b.Commit(true); !errors.Is(err, etcd.ErrTooLarge) {
			t.Errorf("Commit over --max-request-bytes = %v, want ErrTooLarge", err)
		}
		if n := count(t, e); n != 0 {
			t.Errorf("%d keys written", n)
		}
	})
	t.Run("service transaction", func(t *testing.T) {
		// The service's largest transaction, 100 entities of about 40 KiB
		// (4 MiB in all), fits one request at the recommended limit.
		e := openEngine(t, nil)
		b := e.NewBatch()
		for i := range 100 {
			must(t, b.Set(fmt.Appendf(nil, "entity%03d", i), make([]byte, 40<<10)))
		}
		must(t, b.Commit(true))
		if n := count(t, e); n != 100 {
			t.Errorf("%d keys written, want 100", n)
		}
	})
}

// TestCompacted pins that a snapshot, and an iterator, whose revision the
// cluster compacted away fail with ErrCompacted, not with stale or
// missing data.
func TestCompacted(t *testing.T) {
	e := openEngine(t, &etcd.Options{PageSize: 2})
	commitKV(t, e, "a", "1")
	commitKV(t, e, "b", "2")
	commitKV(t, e, "c", "3")
	snap, err := e.NewSnapshot()
	must(t, err)
	defer snap.Close()
	it, err := e.NewIter(nil)
	must(t, err)
	defer it.Close()
	if !it.First() || string(it.Key()) != "a" {
		t.Fatalf("First: %q, %v", it.Key(), it.Error())
	}
	it.Next() // "b": the end of the first page of two
	commitKV(t, e, "a", "changed")
	resp, err := rawClient(t).Compact(bg(), snap.(*etcd.Snapshot).Revision()+1)
	must(t, err)
	_ = resp
	if _, _, err := snap.Get([]byte("a")); !errors.Is(err, etcd.ErrCompacted) {
		t.Errorf("snapshot Get after compaction = %v, want ErrCompacted", err)
	}
	if it.Next() {
		t.Errorf("iterator read %q past compaction", it.Key())
	}
	if err := it.Error(); !errors.Is(err, etcd.ErrCompacted) {
		t.Errorf("iterator Error after compaction = %v, want ErrCompacted", err)
	}
	// The engine's own reads are unaffected.
	if v, _, err := e.Get([]byte("a")); err != nil || string(v) != "changed" {
		t.Errorf("Get(a) = %q, %v", v, err)
	}
}

func commitKV(tb testing.TB, e storage.Engine, k, v string) {
	tb.Helper()
	b := e.NewBatch()
	must(tb, b.Set([]byte(k), []byte(v)))
	must(tb, b.Commit(true))
}

// TestContext pins that a context that has ended stops reads and commits:
// the error wraps the context's, and a commit refused so applies nothing.
func TestContext(t *testing.T) {
	e := openEngine(t, nil)
	commitKV(t, e, "k", "v")
	ctx, cancel := context.WithCancel(bg())
	cancel()
	if _, _, err := e.GetContext(ctx, []byte("k")); !errors.Is(err, context.Canceled) {
		t.Errorf("GetContext(cancelled) = %v, want context.Canceled", err)
	}
	if _, err := e.NewIterContext(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("NewIterContext(cancelled) = %v, want context.Canceled", err)
	}
	// An iterator made with a live context fails once that context ends.
	ctx2, cancel2 := context.WithCancel(bg())
	it, err := e.NewIterContext(ctx2, nil)
	must(t, err)
	cancel2()
	if it.First() {
		t.Errorf("iterator read after its context ended")
	}
	if err := it.Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("iterator error = %v, want context.Canceled", err)
	}
	b := e.NewBatch()
	must(t, b.Set([]byte("k"), []byte("changed")))
	if err := storage.CommitContext(ctx, b, true); !errors.Is(err, context.Canceled) {
		t.Errorf("CommitContext(cancelled) = %v, want context.Canceled", err)
	}
	if v, _, err := e.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Errorf("Get(k) = %q, %v; want the value before the refused commit", v, err)
	}
	// A deadline that ends while a request waits is honoured too.
	ctx3, cancel3 := context.WithTimeout(bg(), time.Nanosecond)
	defer cancel3()
	time.Sleep(time.Millisecond)
	if _, _, err := storage.GetContext(ctx3, e, []byte("k")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GetContext(past deadline) = %v, want context.DeadlineExceeded", err)
	}
}

// TestUnreachable pins that a cluster that cannot be reached is reported
// as storage.ErrUnavailable within Options.Timeout, not as a hang.
func TestUnreachable(t *testing.T) {
	port, err := freePort()
	must(t, err)
	cfg := clientv3.Config{Endpoints: []string{fmt.Sprintf("http://127.0.0.1:%d", port)}, Logger: zap.NewNop()}
	start := time.Now()
	_, err = etcd.Open(cfg, &etcd.Options{Timeout: 500 * time.Millisecond})
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("Open(dead endpoint) = %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Open took %v with a 500ms timeout", d)
	}
}

// TestCommitIfForeignBatch pins that CommitIf refuses a batch of another
// engine (whose keys would land under the wrong prefix) and applies
// nothing.
func TestCommitIfForeignBatch(t *testing.T) {
	a := openEngine(t, nil)
	b := openEngine(t, nil)
	batch := b.NewBatch()
	must(t, batch.Set([]byte("k"), []byte("v")))
	if err := a.CommitIf(bg(), batch, nil); err == nil {
		t.Fatal("CommitIf of another engine's batch succeeded")
	}
	for _, e := range []*etcd.Engine{a, b} {
		if n := count(t, e); n != 0 {
			t.Errorf("%d keys written under %s", n, e.Prefix())
		}
	}
}

// TestNoSpace pins that a cluster whose database reached its quota
// (--quota-backend-bytes) refuses writes with ErrNoSpace, and keeps
// serving reads. It runs on a one-member cluster of its own with a tiny
// quota.
func TestNoSpace(t *testing.T) {
	c, err := startCluster(t.TempDir(), 1, func(cfg *embed.Config) { cfg.QuotaBackendBytes = 2 << 20 })
	must(t, err)
	defer c.stop()
	cfg := clientv3.Config{Endpoints: c.endpoints(), Logger: zap.NewNop()}
	e, err := etcd.Open(cfg, &etcd.Options{MaxRequestBytes: testMaxRequestBytes})
	must(t, err)
	defer e.Close()
	var werr error
	for i := 0; i < 100 && werr == nil; i++ {
		b := e.NewBatch()
		must(t, b.Set(fmt.Appendf(nil, "k%03d", i), make([]byte, 512<<10)))
		werr = b.Commit(true)
	}
	if !errors.Is(werr, etcd.ErrNoSpace) {
		t.Fatalf("writing 50 MiB under a 2 MiB quota: %v, want ErrNoSpace", werr)
	}
	if _, _, err := e.Get([]byte("k000")); err != nil {
		t.Errorf("Get once the quota is exhausted: %v", err)
	}
}
