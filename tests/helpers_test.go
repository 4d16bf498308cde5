package tests

// Helpers these suites share with the root package's tests, which define
// them in files that stay at the root (must in shared_test.go, reopener
// in persist_test.go, collectKeys in query_limit_test.go): copies, as a
// test package cannot import another's test files.

import (
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage/pebble"
)

// reopener opens accounts over one pebble directory, one at a time: each
// call closes the previous account.
type reopener struct {
	t   *testing.T
	dir string
	cur *localtable.Account
}

func newReopener(t *testing.T) *reopener {
	r := &reopener{t: t, dir: t.TempDir()}
	t.Cleanup(func() {
		if r.cur != nil {
			r.cur.Close()
		}
	})
	return r
}

func (r *reopener) open(clock func() time.Time) *localtable.Account {
	r.t.Helper()
	if r.cur != nil {
		if err := r.cur.Close(); err != nil {
			r.t.Fatalf("Close: %v", err)
		}
		r.cur = nil
	}
	db, err := pebble.Open(r.dir, nil)
	if err != nil {
		r.t.Fatalf("pebble.Open: %v", err)
	}
	a, err := localtable.Open(&localtable.Options{Engine: db, Clock: clock})
	if err != nil {
		r.t.Fatalf("Open: %v", err)
	}
	r.cur = a
	return a
}

func collectKeys(t *testing.T, seq func(func(localtable.Entity, error) bool)) []string {
	t.Helper()
	var ks []string
	for e, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, e.PartitionKey+"/"+e.RowKey)
	}
	return ks
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
