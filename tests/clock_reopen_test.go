package tests

import (
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
)

// stamp writes a new entity and returns its Timestamp.
func stamp(t *testing.T, a *localtable.Account, rk string) time.Time {
	t.Helper()
	tbl, err := a.CreateTableIfNotExists(ctx, "Clock")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: rk}); err != nil {
		t.Fatal(err)
	}
	e, err := tbl.Get(ctx, "p", rk, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e.Timestamp
}

// tick is one Timestamp tick.
const tick = 100 * time.Nanosecond

// TestClockReopenDoesNotRunAhead: a clean Close keeps the last Timestamp
// handed out, not the second reserved beyond it, so that reopening does
// not move Timestamps ahead of the clock: ten reopens under a stopped
// clock, one write each, stamp ten consecutive ticks, not ten seconds.
func TestClockReopenDoesNotRunAhead(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := tabletest.NewFakeClock(now)
	cases := []struct {
		name string
		open func() *localtable.Account
	}{
		{"pebble", func() func() *localtable.Account {
			r := tabletest.NewReopener(t)
			return func() *localtable.Account { return r.Open(clk.Now) }
		}()},
		{"shared", func() func() *localtable.Account {
			s := sharedmem.New()
			return func() *localtable.Account {
				a, err := localtable.Open(&localtable.Options{Engine: s.Open(), Clock: clk.Now})
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var prev time.Time
			for i := range 10 {
				a := c.open()
				ts := stamp(t, a, string(rune('a'+i)))
				if !ts.After(prev) {
					t.Fatalf("reopen %d: Timestamp %v not after %v", i, ts, prev)
				}
				if ahead := ts.Sub(now); ahead > time.Duration(i+1)*tick {
					t.Fatalf("reopen %d: Timestamp %v is %v ahead of the clock, want at most %v", i, ts, ahead, time.Duration(i+1)*tick)
				}
				prev = ts
				if c.name == "shared" { // the reopener closes the pebble one
					tabletest.Must(t, a.Close())
				}
			}
		})
	}
}

// crashView is an engine over another that a second Account can open
// while the first is still open and never closed: a crash of the first.
type crashView struct{ storage.Engine }

func (*crashView) Close() error { return nil }

// TestClockCrashCostsOneReservation: after a crash (no Close), the clock
// resumes above the reserved mark: at most a second ahead of the last
// Timestamp, never at or below it.
func TestClockCrashCostsOneReservation(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := tabletest.NewFakeClock(now)
	eng := memory.New(nil)
	open := func() *localtable.Account {
		a, err := localtable.Open(&localtable.Options{Engine: &crashView{eng}, Clock: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	crashed := open()
	stamp(t, crashed, "a")
	last := stamp(t, crashed, "b")
	a := open() // crashed is never closed
	ts := stamp(t, a, "c")
	if !ts.After(last) || ts.Sub(last) > time.Second+tick {
		t.Fatalf("after a crash: Timestamp %v, last before it %v: want after it by at most a second", ts, last)
	}
	a.Close()
	b := open()
	if ts2 := stamp(t, b, "d"); ts2.Sub(ts) != tick {
		t.Fatalf("after a clean Close: Timestamp %v, want the tick after %v", ts2, ts)
	}
	b.Close()
}

// TestClockSharedMarkClose: on a shared engine, Close lowers the stored
// mark toward the last Timestamp the Account handed out only if its
// write of the mark is still the last one, and never below the mark it
// replaced: other Accounts may still stamp up to that one. An Account
// opened later never stamps at or below a Timestamp another handed out.
func TestClockSharedMarkClose(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var s *sharedmem.Store
	open := func(clk *tabletest.FakeClock) *localtable.Account {
		a, err := localtable.Open(&localtable.Options{Engine: s.Open(), Clock: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	at := func(d time.Duration) *tabletest.FakeClock { return tabletest.NewFakeClock(now.Add(d)) }
	after := func(what string, a *localtable.Account, rk string, than time.Time) time.Time {
		t.Helper()
		ts := stamp(t, a, rk)
		if !ts.After(than) {
			t.Fatalf("%s: Timestamp %v, not after %v", what, ts, than)
		}
		return ts
	}

	// b raises the mark above a's; a's Close leaves it.
	s = sharedmem.New()
	a, b := open(at(0)), open(at(10*time.Second))
	stamp(t, a, "a")
	tb := stamp(t, b, "b")
	tabletest.Must(t, a.Close())
	c := open(at(0))
	tc := after("opened after a closed, b open", c, "c", tb)
	// c's write is the last: its Close lowers the mark to its Timestamp.
	tabletest.Must(t, c.Close())
	d := open(at(0))
	if td := stamp(t, d, "d"); td.Sub(tc) != tick {
		t.Fatalf("after the last writer closed: Timestamp %v, want the tick after %v", td, tc)
	}
	// d wrote the mark since: b's Close leaves it.
	tabletest.Must(t, b.Close())
	e := open(at(0))
	td, err := d.Table("Clock").Get(ctx, "p", "d", nil)
	tabletest.Must(t, err)
	after("opened after b closed, d open", e, "e", td.Timestamp)
	tabletest.Must(t, d.Close())
	tabletest.Must(t, e.Close())

	// a reserves first, then b, whose clock is ahead, above it; a goes on
	// stamping under its own reservation, past b's last Timestamp. b's
	// Close lowers the mark no lower than a's reservation.
	s = sharedmem.New()
	clkA := at(0)
	a, b = open(clkA), open(at(500*time.Millisecond))
	stamp(t, a, "a1")
	stamp(t, b, "b")
	clkA.Set(now.Add(900 * time.Millisecond))
	ta := stamp(t, a, "a2")
	tabletest.Must(t, b.Close())
	c = open(at(0))
	after("opened after b closed, a open", c, "c", ta)
	tabletest.Must(t, a.Close())
	tabletest.Must(t, c.Close())

	// b's reservation is covered by a's mark, and b stamps under it past
	// a's last Timestamp: b's write of the mark (one tick more) makes a's
	// Close leave it.
	s = sharedmem.New()
	clkB := at(0)
	a, b = open(at(500*time.Millisecond)), open(clkB)
	stamp(t, a, "a")
	stamp(t, b, "b1")
	clkB.Set(now.Add(900 * time.Millisecond))
	tb = stamp(t, b, "b2")
	tabletest.Must(t, a.Close())
	c = open(at(0))
	after("opened after a closed, b open", c, "c", tb)
	tabletest.Must(t, b.Close())
	tabletest.Must(t, c.Close())
}
