package tabletest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
	"github.com/localtable/localtable/storage/pebble"
)

// Engine is one storage engine of the test matrix: every table-level test
// runs once per engine, as bbolt runs its suite per freelist type. Name
// names it ("memory", "pebble" or "shared"); Open opens a fresh one,
// removed with the test.
type Engine struct {
	Name string
	Open func(t testing.TB) storage.Engine
}

// Engines is the test matrix: the memory engine, pebble on disk, and a
// shared engine.
var Engines = []Engine{
	{"memory", func(testing.TB) storage.Engine { return memory.New(&memory.Options{Logs: keyenc.LogPrefixes()}) }},
	{"pebble", OpenPebble},
	// A shared engine (storage.VersionedEngine): the table layer's path
	// for stores that several processes share, such as etcd.
	{"shared", func(testing.TB) storage.Engine { return sharedmem.New().Open() }},
}

// OpenPebble opens a real pebble engine on disk, in a directory removed
// with the test, syncing every commit as in production.
func OpenPebble(t testing.TB) storage.Engine {
	t.Helper()
	db, err := pebble.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatalf("pebble.Open: %v", err)
	}
	return db
}

// ForEachEngine runs f as a subtest per engine.
func ForEachEngine(t *testing.T, f func(t *testing.T, eng Engine)) {
	for _, e := range Engines {
		t.Run(e.Name, func(t *testing.T) { f(t, e) })
	}
}

// OpenAccount opens an account on a fresh engine of kind eng (unless opts
// sets an Engine), closed with the test.
func OpenAccount(t testing.TB, eng Engine, opts *localtable.Options) *localtable.Account {
	t.Helper()
	var o localtable.Options
	if opts != nil {
		o = *opts
	}
	if o.Engine == nil {
		o.Engine = eng.Open(t)
	}
	a, err := localtable.Open(&o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// NewTable opens an account on eng and creates table "tbl1" in it.
func NewTable(t testing.TB, eng Engine) (*localtable.Account, *localtable.Table) {
	t.Helper()
	a := OpenAccount(t, eng, nil)
	tbl, err := a.CreateTable(context.Background(), "tbl1")
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return a, tbl
}

// FakeClock is a controllable clock for tests: pass its Now as
// Options.Clock. It is safe for concurrent use.
type FakeClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewFakeClock returns a FakeClock reading t.
func NewFakeClock(t time.Time) *FakeClock { return &FakeClock{t: t} }

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set sets the clock's time to t.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
