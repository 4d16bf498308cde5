package tabletest

import (
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage/pebble"
)

// Reopener opens accounts over one pebble directory, one at a time: each
// Open closes the previous account, and the last is closed with the test.
type Reopener struct {
	t   *testing.T
	dir string
	cur *localtable.Account
}

// NewReopener returns a Reopener over a fresh directory, removed with the
// test.
func NewReopener(t *testing.T) *Reopener {
	r := &Reopener{t: t, dir: t.TempDir()}
	t.Cleanup(func() {
		if r.cur != nil {
			r.cur.Close()
		}
	})
	return r
}

// Open closes the account opened last, if any, and opens the directory
// again, with clock as Options.Clock.
func (r *Reopener) Open(clock func() time.Time) *localtable.Account {
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
