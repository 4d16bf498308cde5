package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/localtable/localtable/storage"
)

// versionedTests run, from Run, on engines that implement
// storage.VersionedEngine.
var versionedTests = []struct {
	name string
	fn   func(t *testing.T, e storage.VersionedEngine)
}{
	{"VersionedGet", testVersionedGet},
	{"VersionedCommitIf", testVersionedCommitIf},
	{"VersionedAbsent", testVersionedAbsent},
	{"VersionedContext", testVersionedContext},
	{"VersionedCounter", testVersionedCounter},
	{"VersionedMultiGet", testVersionedMultiGet},
}

func getVersion(t testing.TB, e storage.VersionedEngine, key string) (string, storage.Version, bool) {
	t.Helper()
	v, ver, c, err := e.GetVersion(context.Background(), []byte(key))
	if errors.Is(err, storage.ErrNotFound) {
		if ver != storage.NoVersion || c != nil {
			t.Errorf("GetVersion(%q): ErrNotFound with version %d, closer %v", key, ver, c)
		}
		return "", storage.NoVersion, false
	}
	if err != nil {
		t.Fatalf("GetVersion(%q): %v", key, err)
	}
	if ver == storage.NoVersion {
		t.Errorf("GetVersion(%q): present with NoVersion", key)
	}
	s := string(v)
	if err := c.Close(); err != nil {
		t.Errorf("GetVersion(%q): closer: %v", key, err)
	}
	return s, ver, true
}

// commitIf applies ops in one batch committed with conds.
func commitIf(t testing.TB, e storage.VersionedEngine, conds []storage.Condition, ops ...op) error {
	t.Helper()
	b := e.NewBatch()
	defer b.Close()
	apply(t, b, ops...)
	return e.CommitIf(context.Background(), b, conds)
}

func cond(key string, v storage.Version) storage.Condition {
	return storage.Condition{Key: []byte(key), Version: v}
}

// testVersionedGet pins that a Version changes on every write, including
// a write of the same value and a re-creation after a delete, and never
// comes back.
func testVersionedGet(t *testing.T, e storage.VersionedEngine) {
	if _, _, ok := getVersion(t, e, "k"); ok {
		t.Fatal("absent key found")
	}
	seen := map[storage.Version]string{}
	note := func(what string, want string) {
		t.Helper()
		got, v, ok := getVersion(t, e, "k")
		if !ok || got != want {
			t.Fatalf("%s: GetVersion = %q, %v; want %q", what, got, ok, want)
		}
		if prev, dup := seen[v]; dup {
			t.Errorf("%s: version %d seen before, %s", what, v, prev)
		}
		seen[v] = what
	}
	commit(t, e, set("k", "v1"))
	note("first write", "v1")
	commit(t, e, set("k", "v1"))
	note("same value again", "v1")
	commit(t, e, set("other", "x"))
	if _, v, _ := getVersion(t, e, "k"); seen[v] != "same value again" {
		t.Errorf("a write of another key changed k's version")
	}
	commit(t, e, del("k"))
	if _, v, ok := getVersion(t, e, "k"); ok || v != storage.NoVersion {
		t.Errorf("deleted key: present %v, version %d", ok, v)
	}
	commit(t, e, set("k", "v1"))
	note("re-created", "v1")
	commit(t, e, set("j", "0"), set("k", "v2"), delRange("a", "b"))
	note("in a batch of several", "v2")
}

// testVersionedCommitIf pins that a conditional commit applies only when
// every condition holds, applies nothing otherwise, and consumes its
// batch either way.
func testVersionedCommitIf(t *testing.T, e storage.VersionedEngine) {
	commit(t, e, set("k", "v1"), set("g", "guard"))
	_, v1, _ := getVersion(t, e, "k")
	_, g1, _ := getVersion(t, e, "g")

	if err := commitIf(t, e, []storage.Condition{cond("k", v1)}, set("k", "v2")); err != nil {
		t.Fatalf("CommitIf with the current version: %v", err)
	}
	wantGet(t, e, "k", "v2")
	// The version read before is stale now.
	err := commitIf(t, e, []storage.Condition{cond("k", v1)}, set("k", "v3"), set("new", "x"))
	if !errors.Is(err, storage.ErrConditionFailed) {
		t.Fatalf("CommitIf with a stale version = %v, want ErrConditionFailed", err)
	}
	wantGet(t, e, "k", "v2")
	wantAbsent(t, e, "new")

	// A condition on a key the batch does not write guards it all the
	// same; one failing condition among several fails the commit.
	_, v2, _ := getVersion(t, e, "k")
	if err := commitIf(t, e, []storage.Condition{cond("g", g1), cond("k", v2)}, set("other", "1")); err != nil {
		t.Fatalf("CommitIf guarded by another key: %v", err)
	}
	wantGet(t, e, "other", "1")
	commit(t, e, set("g", "guard")) // same value, new version
	err = commitIf(t, e, []storage.Condition{cond("k", v2), cond("g", g1)}, set("other", "2"), delRange("a", "z"))
	if !errors.Is(err, storage.ErrConditionFailed) {
		t.Fatalf("CommitIf with one stale condition of two = %v, want ErrConditionFailed", err)
	}
	wantScan(t, e, []KV{{"g", "guard"}, {"k", "v2"}, {"other", "1"}})

	// An empty batch checks its conditions and writes nothing.
	if err := commitIf(t, e, []storage.Condition{cond("k", v1)}); !errors.Is(err, storage.ErrConditionFailed) {
		t.Errorf("empty CommitIf with a stale version = %v, want ErrConditionFailed", err)
	}
	if err := commitIf(t, e, []storage.Condition{cond("k", v2)}); err != nil {
		t.Errorf("empty CommitIf with the current version = %v", err)
	}

	// CommitIf consumes the batch, whatever the outcome.
	for _, c := range []storage.Condition{cond("k", v1), cond("k", v2)} {
		b := e.NewBatch()
		apply(t, b, set("k", "again"))
		_ = e.CommitIf(context.Background(), b, []storage.Condition{c})
		if err := b.Commit(false); !errors.Is(err, storage.ErrClosed) {
			t.Errorf("Commit after CommitIf = %v, want ErrClosed", err)
		}
		b.Close()
	}
	wantGet(t, e, "k", "again")
}

// testVersionedAbsent pins NoVersion conditions: "the key is absent".
func testVersionedAbsent(t *testing.T, e storage.VersionedEngine) {
	if err := commitIf(t, e, []storage.Condition{cond("n", storage.NoVersion)}, set("n", "1")); err != nil {
		t.Fatalf("CommitIf(absent) on an absent key: %v", err)
	}
	err := commitIf(t, e, []storage.Condition{cond("n", storage.NoVersion)}, set("n", "2"))
	if !errors.Is(err, storage.ErrConditionFailed) {
		t.Fatalf("CommitIf(absent) on a present key = %v, want ErrConditionFailed", err)
	}
	wantGet(t, e, "n", "1")
	_, v, _ := getVersion(t, e, "n")
	if err := commitIf(t, e, []storage.Condition{cond("n", v)}, del("n")); err != nil {
		t.Fatalf("conditional delete: %v", err)
	}
	// Deleted: absent again, and the old version no longer holds.
	if err := commitIf(t, e, []storage.Condition{cond("n", v)}, set("n", "3")); !errors.Is(err, storage.ErrConditionFailed) {
		t.Errorf("CommitIf with the version of a deleted key = %v, want ErrConditionFailed", err)
	}
	if err := commitIf(t, e, []storage.Condition{cond("n", storage.NoVersion)}, set("n", "4")); err != nil {
		t.Errorf("CommitIf(absent) after delete: %v", err)
	}
	wantGet(t, e, "n", "4")
}

// testVersionedContext pins that an ended context stops CommitIf before
// it applies anything.
func testVersionedContext(t *testing.T, e storage.VersionedEngine) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := e.NewBatch()
	apply(t, b, set("k", "v"))
	if err := e.CommitIf(ctx, b, []storage.Condition{cond("k", storage.NoVersion)}); !errors.Is(err, context.Canceled) {
		t.Errorf("CommitIf(cancelled) = %v, want context.Canceled", err)
	}
	wantAbsent(t, e, "k")
	if _, _, _, err := e.GetVersion(ctx, []byte("k")); !errors.Is(err, context.Canceled) {
		t.Errorf("GetVersion(cancelled) = %v, want context.Canceled", err)
	}
}

// testVersionedCounter has goroutines increment one counter by
// read-version, CommitIf, retry on ErrConditionFailed: the optimistic
// read-modify-write the table layer needs. No increment may be lost.
func testVersionedCounter(t *testing.T, e storage.VersionedEngine) {
	const workers, each = 4, 25
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	var mu sync.Mutex
	conflicts := 0
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				for {
					v, ver, c, err := e.GetVersion(context.Background(), []byte("counter"))
					n := 0
					switch {
					case errors.Is(err, storage.ErrNotFound):
					case err != nil:
						errc <- err
						return
					default:
						n, err = strconv.Atoi(string(v))
						c.Close()
						if err != nil {
							errc <- err
							return
						}
					}
					b := e.NewBatch()
					if err := b.Set([]byte("counter"), []byte(strconv.Itoa(n+1))); err != nil {
						errc <- err
						return
					}
					err = e.CommitIf(context.Background(), b, []storage.Condition{{Key: []byte("counter"), Version: ver}})
					if err == nil {
						break
					}
					if !errors.Is(err, storage.ErrConditionFailed) {
						errc <- err
						return
					}
					mu.Lock()
					conflicts++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	wantGet(t, e, "counter", fmt.Sprint(workers*each))
	t.Logf("%d conflicts retried", conflicts)
}

// testVersionedMultiGet pins storage.GetVersions (one request on an engine
// that implements storage.MultiGetter): each key's value and Version as
// GetVersion returns them, nil and NoVersion for an absent one, in the
// order asked, a key asked twice answered twice.
func testVersionedMultiGet(t *testing.T, e storage.VersionedEngine) {
	_, isMulti := e.(storage.MultiGetter)
	t.Logf("MultiGetter: %v", isMulti)
	commit(t, e, set("a", "1"), set("b", ""), set("c", "3"))
	_, va, _ := getVersion(t, e, "a")
	_, vb, _ := getVersion(t, e, "b")
	_, vc, _ := getVersion(t, e, "c")
	keys := [][]byte{[]byte("c"), []byte("missing"), []byte("a"), []byte("b"), []byte("a")}
	vals, vers, c, err := storage.GetVersions(context.Background(), e, keys)
	if err != nil {
		t.Fatalf("GetVersions: %v", err)
	}
	want := []struct {
		val     string
		present bool
		ver     storage.Version
	}{{"3", true, vc}, {"", false, storage.NoVersion}, {"1", true, va}, {"", true, vb}, {"1", true, va}}
	if len(vals) != len(keys) || len(vers) != len(keys) {
		t.Fatalf("GetVersions: %d values and %d versions for %d keys", len(vals), len(vers), len(keys))
	}
	for i, w := range want {
		if (vals[i] != nil) != w.present || string(vals[i]) != w.val || vers[i] != w.ver {
			t.Errorf("key %q: value %q (present %v), version %d; want %q (present %v), version %d",
				keys[i], vals[i], vals[i] != nil, vers[i], w.val, w.present, w.ver)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("closer: %v", err)
	}
	// After a write, the versions read again are the new ones.
	commit(t, e, set("a", "2"), del("c"))
	_, va2, _ := getVersion(t, e, "a")
	vals, vers, c, err = storage.GetVersions(context.Background(), e, [][]byte{[]byte("a"), []byte("c")})
	if err != nil {
		t.Fatalf("GetVersions: %v", err)
	}
	if string(vals[0]) != "2" || vers[0] != va2 || vers[0] == va || vals[1] != nil || vers[1] != storage.NoVersion {
		t.Errorf("after a write: %q@%d, %q@%d; want \"2\"@%d, absent", vals[0], vers[0], vals[1], vers[1], va2)
	}
	c.Close()
	if vals, vers, c, err := storage.GetVersions(context.Background(), e, nil); err != nil || len(vals) != 0 || len(vers) != 0 {
		t.Errorf("GetVersions of no keys = %d, %d, %v", len(vals), len(vers), err)
	} else {
		c.Close()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := storage.GetVersions(ctx, e, keys); !errors.Is(err, context.Canceled) {
		t.Errorf("GetVersions(cancelled) = %v, want context.Canceled", err)
	}
}
