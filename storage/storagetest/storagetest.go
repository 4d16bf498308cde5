// Package storagetest is a conformance suite for storage.Engine
// implementations, in the manner of testing/fstest: an engine's tests call
// Run with a function that opens a fresh, empty engine, and every behaviour
// the storage package documents is checked against it.
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Engine {
//			return memory.New(nil)
//		})
//	}
//
// The randomized model test uses a fixed seed; pass -storagetest.seed=N to
// the test binary to explore others (0 picks a time-based seed, which is
// logged). Bench runs the same benchmarks against any engine.
package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/localtable/localtable/storage"
)

// Run runs the conformance suite as subtests of t; for an engine that
// implements storage.VersionedEngine, it also checks GetVersion and
// CommitIf (other engines skip those subtests). open must return a new,
// empty engine each time it is called; Run closes the engine when the
// subtest ends (open must not close it itself), and fails the subtest if
// that Close returns an error other than storage.ErrClosed. open may use t
// for t.TempDir and the like.
func Run(t *testing.T, open func(t *testing.T) storage.Engine) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, e storage.Engine)
	}{
		{"GetSetDelete", testGetSetDelete},
		{"NotFound", testNotFound},
		{"Overwrite", testOverwrite},
		{"EmptyValue", testEmptyValue},
		{"BinaryKeys", testBinaryKeys},
		{"BatchOrdering", testBatchOrdering},
		{"BatchAtomicity", testBatchAtomicity},
		{"BatchLifecycle", testBatchLifecycle},
		{"DeleteRange", testDeleteRange},
		{"IterBounds", testIterBounds},
		{"IterMovement", testIterMovement},
		{"IterOutOfBoundsSeek", testIterOutOfBoundsSeek},
		{"IterClose", testIterClose},
		{"EmptyEngine", testEmptyEngine},
		{"ManyKeys", testManyKeys},
		{"SnapshotIsolation", testSnapshotIsolation},
		{"SnapshotIterStable", testSnapshotIterStable},
		{"SnapshotClose", testSnapshotClose},
		{"BufferOwnership", testBufferOwnership},
		{"StableReads", testStableReads},
		{"SyncCommit", testSyncCommit},
		{"Closed", testClosed},
		{"RandomModel", testRandomModel},
		{"ConcurrentPairs", testConcurrentPairs},
		{"ConcurrentMonotonic", testConcurrentMonotonic},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := open(t)
			t.Cleanup(func() {
				if err := e.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, e)
		})
	}
	for _, tc := range versionedTests {
		t.Run(tc.name, func(t *testing.T) {
			e := open(t)
			t.Cleanup(func() {
				if err := e.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
					t.Errorf("Close: %v", err)
				}
			})
			ve, ok := e.(storage.VersionedEngine)
			if !ok {
				t.Skip("the engine does not implement storage.VersionedEngine")
			}
			tc.fn(t, ve)
		})
	}
}

// KV is one key-value pair, as strings for readable diffs.
type KV struct {
	K string // the key
	V string // the value
}

// String formats the pair as quoted key=value.
func (kv KV) String() string { return fmt.Sprintf("%q=%q", kv.K, kv.V) }

// op is one write for commit.
type op struct {
	kind     byte // 's' set, 'd' delete, 'r' delete range
	key, val string
}

func set(k, v string) op      { return op{'s', k, v} }
func del(k string) op         { return op{'d', k, ""} }
func delRange(s, e string) op { return op{'r', s, e} }

// commit applies ops in one batch and commits it without sync.
func commit(t testing.TB, e storage.Engine, ops ...op) {
	t.Helper()
	b := e.NewBatch()
	defer b.Close()
	apply(t, b, ops...)
	if err := b.Commit(false); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

func apply(t testing.TB, b storage.Batch, ops ...op) {
	t.Helper()
	for _, o := range ops {
		var err error
		switch o.kind {
		case 's':
			err = b.Set([]byte(o.key), []byte(o.val))
		case 'd':
			err = b.Delete([]byte(o.key))
		case 'r':
			err = b.DeleteRange([]byte(o.key), []byte(o.val))
		}
		if err != nil {
			t.Fatalf("batch op %c %q: %v", o.kind, o.key, err)
		}
	}
}

// get reads key; ok is false if it is absent. Other errors fail the test.
func get(t testing.TB, r storage.Reader, key string) (val string, ok bool) {
	t.Helper()
	v, c, err := r.Get([]byte(key))
	if errors.Is(err, storage.ErrNotFound) {
		if c != nil {
			t.Errorf("Get(%q): ErrNotFound with non-nil closer", key)
		}
		return "", false
	}
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if c == nil {
		t.Fatalf("Get(%q): nil closer", key)
	}
	if v == nil {
		t.Errorf("Get(%q): nil value with nil error", key)
	}
	val = string(v)
	if err := c.Close(); err != nil {
		t.Errorf("Get(%q): closer.Close: %v", key, err)
	}
	return val, true
}

func wantGet(t testing.TB, r storage.Reader, key, want string) {
	t.Helper()
	got, ok := get(t, r, key)
	if !ok {
		t.Errorf("Get(%q) = not found, want %q", key, want)
	} else if got != want {
		t.Errorf("Get(%q) = %q, want %q", key, got, want)
	}
}

func wantAbsent(t testing.TB, r storage.Reader, key string) {
	t.Helper()
	if got, ok := get(t, r, key); ok {
		t.Errorf("Get(%q) = %q, want not found", key, got)
	}
}

func newIter(t testing.TB, r storage.Reader, lower, upper []byte) storage.Iterator {
	t.Helper()
	var opts *storage.IterOptions
	if lower != nil || upper != nil {
		opts = &storage.IterOptions{LowerBound: lower, UpperBound: upper}
	}
	it, err := r.NewIter(opts)
	if err != nil {
		t.Fatalf("NewIter: %v", err)
	}
	return it
}

// scan returns every pair in [lower, upper) in order: forward if !reverse,
// otherwise backward (the result is still reported in iteration order).
func scan(t testing.TB, r storage.Reader, lower, upper []byte, reverse bool) []KV {
	t.Helper()
	it := newIter(t, r, lower, upper)
	defer func() {
		if err := it.Close(); err != nil {
			t.Errorf("Iterator.Close: %v", err)
		}
	}()
	return scanIter(t, it, reverse)
}

func scanIter(t testing.TB, it storage.Iterator, reverse bool) []KV {
	t.Helper()
	var out []KV
	var ok bool
	if reverse {
		ok = it.Last()
	} else {
		ok = it.First()
	}
	for ; ok; ok = step(it, reverse) {
		if !it.Valid() {
			t.Fatalf("positioning reported true but Valid() is false")
		}
		out = append(out, KV{string(it.Key()), string(it.Value())})
		if len(out) > 1_000_000 {
			t.Fatalf("iterator does not end")
		}
	}
	if it.Valid() {
		t.Errorf("positioning reported false but Valid() is true")
	}
	if err := it.Error(); err != nil {
		t.Fatalf("Iterator.Error: %v", err)
	}
	return out
}

func step(it storage.Iterator, reverse bool) bool {
	if reverse {
		return it.Prev()
	}
	return it.Next()
}

func wantScan(t testing.TB, r storage.Reader, want []KV) {
	t.Helper()
	wantScanBounds(t, r, nil, nil, want)
}

// wantScanBounds checks both a forward and a backward scan of [lower,
// upper) against want (given in ascending order).
func wantScanBounds(t testing.TB, r storage.Reader, lower, upper []byte, want []KV) {
	t.Helper()
	got := scan(t, r, lower, upper, false)
	if diff := cmp.Diff(want, got, cmp.Comparer(kvSliceEqual)); diff != "" {
		t.Errorf("forward scan [%q, %q) mismatch (-want +got):\n%s", lower, upper, diff)
	}
	got = reversed(scan(t, r, lower, upper, true))
	if diff := cmp.Diff(want, got, cmp.Comparer(kvSliceEqual)); diff != "" {
		t.Errorf("backward scan [%q, %q) mismatch (-want +got, ascending):\n%s", lower, upper, diff)
	}
}

// kvSliceEqual treats nil and empty as equal.
func kvSliceEqual(a, b []KV) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func reversed(kvs []KV) []KV {
	out := make([]KV, len(kvs))
	for i, kv := range kvs {
		out[len(kvs)-1-i] = kv
	}
	return out
}

// wantAt checks that the iterator is valid at key (and value, if
// non-empty want value).
func wantAt(t testing.TB, it storage.Iterator, moved bool, what, key, val string) {
	t.Helper()
	if !moved || !it.Valid() {
		t.Fatalf("%s: iterator invalid (moved=%v, err=%v), want at %q", what, moved, it.Error(), key)
	}
	if got := string(it.Key()); got != key {
		t.Fatalf("%s: at key %q, want %q", what, got, key)
	}
	if got := string(it.Value()); got != val {
		t.Fatalf("%s: key %q has value %q, want %q", what, key, got, val)
	}
}

func wantInvalid(t testing.TB, it storage.Iterator, moved bool, what string) {
	t.Helper()
	if moved || it.Valid() {
		t.Fatalf("%s: iterator valid at %q (moved=%v), want exhausted", what, it.Key(), moved)
	}
	if err := it.Error(); err != nil {
		t.Fatalf("%s: Error() = %v", what, err)
	}
}

func bs(s string) []byte { return []byte(s) }

// alphabet is committed by several tests: keys and values.
var alphabet = []KV{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}}

func commitKVs(t testing.TB, e storage.Engine, kvs []KV) {
	t.Helper()
	ops := make([]op, len(kvs))
	for i, kv := range kvs {
		ops[i] = set(kv.K, kv.V)
	}
	commit(t, e, ops...)
}

func filter(kvs []KV, keep func(KV) bool) []KV {
	var out []KV
	for _, kv := range kvs {
		if keep(kv) {
			out = append(out, kv)
		}
	}
	return out
}

func inRange(lower, upper []byte) func(KV) bool {
	return func(kv KV) bool {
		k := []byte(kv.K)
		return (lower == nil || bytes.Compare(k, lower) >= 0) &&
			(upper == nil || bytes.Compare(k, upper) < 0)
	}
}
