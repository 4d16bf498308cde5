package tests

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage/pebble"
)

// etagLog collects every ETag an account hands out and fails the test on
// the first one handed out twice.
type etagLog struct {
	t    *testing.T
	seen map[localtable.ETag]string // ETag → the write that got it
}

func newETagLog(t *testing.T) *etagLog {
	return &etagLog{t: t, seen: make(map[localtable.ETag]string)}
}

func (l *etagLog) add(tag localtable.ETag, what string) {
	l.t.Helper()
	if tag == "" {
		l.t.Fatalf("%s: empty ETag", what)
	}
	if prev, dup := l.seen[tag]; dup {
		l.t.Fatalf("%s got ETag %s, already handed out to %s", what, tag, prev)
	}
	l.seen[tag] = what
}

// clockWrites makes one write of each kind at the clock's current time and
// logs their ETags. It returns the first error.
func clockWrites(l *etagLog, tbl *localtable.Table, step string) error {
	e := localtable.Entity{PartitionKey: "p", RowKey: "w-" + step}
	tag, err := tbl.Insert(ctx, e)
	if err != nil {
		return err
	}
	l.add(tag, step+" insert")
	if tag, err = tbl.Upsert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "counter"}, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge}); err != nil {
		return err
	}
	l.add(tag, step+" upsert")
	tags, err := tbl.Transact(ctx, []localtable.Action{
		{Type: localtable.ActionUpsertReplace, Entity: localtable.Entity{PartitionKey: "p", RowKey: "tx1"}},
		{Type: localtable.ActionUpsertReplace, Entity: localtable.Entity{PartitionKey: "p", RowKey: "tx2"}},
	})
	if err != nil {
		return err
	}
	l.add(tags[0], step+" transaction")
	return nil
}

// wantClockError fails unless err is ErrClockOutOfRange.
func wantClockError(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, localtable.ErrClockOutOfRange) {
		t.Fatalf("%s: %v, want ErrClockOutOfRange", what, err)
	}
	var le *localtable.Error
	if !errors.As(err, &le) || le.Code != localtable.CodeInternalError {
		t.Fatalf("%s: %v is not an *Error with code InternalError", what, err)
	}
}

// TestClockOutOfRange sets the clock past 9999-12-31 and before 1601: a
// write is refused with ErrClockOutOfRange and nothing is written; when the
// clock comes back, writes resume, and no ETag is ever handed out twice, so
// an If-Match of an older version never matches a newer one.
func TestClockOutOfRange(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		clk := tabletest.NewFakeClock(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
		a := tabletest.OpenAccount(t, eng, &localtable.Options{Clock: clk.Now})
		tbl, err := a.CreateTable(ctx, "Clock")
		if err != nil {
			t.Fatal(err)
		}
		log := newETagLog(t)
		if err := clockWrites(log, tbl, "2024"); err != nil {
			t.Fatal(err)
		}
		stale, err := tbl.Get(ctx, "p", "counter", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []time.Time{
			time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
			localtable.MaxDateTime.Add(100 * time.Nanosecond),
			time.Date(1600, 12, 31, 23, 59, 59, 0, time.UTC),
			time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Time{}.Add(-time.Hour),
		} {
			clk.Set(bad)
			step := bad.Format(time.RFC3339Nano)
			err := clockWrites(log, tbl, step)
			wantClockError(t, err, "a write at "+step)
			if _, err := tbl.Get(ctx, "p", "w-"+step, nil); !errors.Is(err, localtable.ErrEntityNotFound) {
				t.Fatalf("the refused write at %s: Get = %v, want ErrEntityNotFound", step, err)
			}
		}
		// Back to the time of the first writes.
		clk.Set(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
		if err := clockWrites(log, tbl, "back"); err != nil {
			t.Fatalf("a write once the clock is back: %v", err)
		}
		// The version read before the excursion is stale: its ETag must not
		// match the current one.
		stale.Properties = localtable.Properties{"Stale": localtable.BoolValue(true)}
		if _, err := tbl.Update(ctx, stale, &localtable.UpdateOptions{IfMatch: stale.ETag}); !errors.Is(err, localtable.ErrConditionNotMet) {
			t.Fatalf("an update with a stale If-Match: %v, want ErrConditionNotMet", err)
		}
		for i := 1; i <= 3; i++ {
			clk.Set(time.Date(2024, 5, 1, 0, 0, i, 0, time.UTC))
			if err := clockWrites(log, tbl, fmt.Sprint("later ", i)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestClockToMaxAndBack runs the clock to the last representable
// Timestamp, 9999-12-31T23:59:59.9999999, and back. The write at the last
// tick is the account's last: as Timestamps strictly increase, every later
// write fails with ErrClockOutOfRange, whatever the clock says, also after
// a reopen, instead of wrapping and repeating an ETag. Reads go on working.
func TestClockToMaxAndBack(t *testing.T) {
	dir := t.TempDir()
	clk := tabletest.NewFakeClock(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	open := func() *localtable.Account {
		t.Helper()
		db, err := pebble.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := localtable.Open(&localtable.Options{Engine: db, Clock: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := open()
	tbl, err := a.CreateTable(ctx, "Clock")
	if err != nil {
		t.Fatal(err)
	}
	log := newETagLog(t)
	if err := clockWrites(log, tbl, "2024"); err != nil {
		t.Fatal(err)
	}
	clk.Set(localtable.MaxDateTime.Add(-50 * time.Nanosecond)) // one tick before the last
	tag, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "last-but-one"})
	if err != nil {
		t.Fatal(err)
	}
	log.add(tag, "the last tick but one")
	clk.Set(localtable.MaxDateTime)
	tag, err = tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "last"})
	if err != nil {
		t.Fatal(err)
	}
	log.add(tag, "the last tick")
	if e, err := tbl.Get(ctx, "p", "last", nil); err != nil || !e.Timestamp.Equal(localtable.MaxDateTime) {
		t.Fatalf("the write at the last tick: %v %v", e.Timestamp, err)
	}
	check := func(when string) {
		t.Helper()
		for _, now := range []time.Time{localtable.MaxDateTime, time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)} {
			clk.Set(now)
			step := when + " at " + now.Format(time.RFC3339Nano)
			wantClockError(t, clockWrites(log, tbl, step), "a write "+step)
		}
		if _, err := tbl.Get(ctx, "p", "counter", nil); err != nil {
			t.Fatalf("a read %s: %v", when, err)
		}
	}
	check("after the last tick")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a = open()
	defer a.Close()
	tbl = a.Table("Clock")
	check("after a reopen")
}

// TestOpenClockOutOfRange opens an account on a clock outside the
// DateTime range: Open fails with ErrClockOutOfRange.
func TestOpenClockOutOfRange(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		for _, bad := range []time.Time{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)} {
			a, err := localtable.Open(&localtable.Options{Engine: eng.Open(t), Clock: func() time.Time { return bad }})
			if err == nil {
				a.Close()
			}
			wantClockError(t, err, "Open at "+bad.String())
		}
	})
}
