package tests

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
	"github.com/localtable/localtable/storage/pebble"
)

// engine is one storage engine of the test matrix: every table-level test
// runs once per engine, as bbolt runs its suite per freelist type.
type engine struct {
	name string
	open func(t testing.TB) storage.Engine
}

var engines = []engine{
	{"memory", func(testing.TB) storage.Engine { return memory.New(nil) }},
	{"pebble", openPebble},
	// A shared engine (storage.VersionedEngine): the table layer's path
	// for stores that several processes share, such as etcd.
	{"shared", func(testing.TB) storage.Engine { return sharedmem.New().Open() }},
}

// openPebble opens a real pebble engine on disk, in a directory removed
// with the test, syncing every commit as in production.
func openPebble(t testing.TB) storage.Engine {
	t.Helper()
	db, err := pebble.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatalf("pebble.Open: %v", err)
	}
	return db
}

// forEachEngine runs f as a subtest per engine.
func forEachEngine(t *testing.T, f func(t *testing.T, eng engine)) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { f(t, e) })
	}
}

// openAccount opens an account on a fresh engine of kind eng, closed with
// the test.
func openAccount(t testing.TB, eng engine, opts *localtable.Options) *localtable.Account {
	t.Helper()
	var o localtable.Options
	if opts != nil {
		o = *opts
	}
	if o.Engine == nil {
		o.Engine = eng.open(t)
	}
	a, err := localtable.Open(&o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// newTable opens an account on eng and creates table "tbl1" in it.
func newTable(t testing.TB, eng engine) (*localtable.Account, *localtable.Table) {
	t.Helper()
	a := openAccount(t, eng, nil)
	tbl, err := a.CreateTable(context.Background(), "tbl1")
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return a, tbl
}

// fakeClock is a controllable clock for tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
