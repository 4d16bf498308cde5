// Command log-tail shows the log tail pattern: RowKeys of inverted ticks
// (DateTime.MaxValue's ticks minus the time's, zero-padded to 19 digits)
// make a partition's newest entities come first, so "the newest n" is the
// first n of a range query, `$top=n` on the wire.
//
// The problem: readings of a sensor are keyed by time in its partition.
// Entities come back in ascending key order, so with the time as RowKey the
// newest readings are at the end: reading the latest ten reads them all.
//
// The pattern: the RowKey is localtable.InvertedTicksKey(t), which sorts
// newest first. The latest ten are a query with a limit of ten that reads
// ten entities; a time window is still one RowKey range, with its bounds
// swapped.
//
// The trade-offs the design guide names: the order is fixed when the key
// is written, so reading oldest first now costs what newest first did; and
// keys that grow (or shrink) with time send every insert to one end of the
// partition (see the prepend-append example: spread the partitions).
//
// What the program proves: the newest ten read 10 entities against the
// whole partition with ascending keys, both giving the same readings; a
// one-hour window reads exactly its 60 readings; the keys parse back to
// their times.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/examples/internal/show"
	"github.com/localtable/localtable/filter"
)

func main() {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer acct.Close()
	if err := run(ctx, acct, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

const (
	sensor   = "boiler-1"
	readings = 5000 // one a minute
)

var start = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

// Reading is one measurement.
type Reading struct {
	PartitionKey string    // the sensor
	RowKey       string    // the time, inverted or not
	At           time.Time // the time, as a property too
	Celsius      float64
}

func readingAt(i int) Reading {
	return Reading{PartitionKey: sensor, At: start.Add(time.Duration(i) * time.Minute),
		Celsius: 60 + float64((i*37)%200)/10}
}

func run(ctx context.Context, acct *localtable.Account, w io.Writer) error {
	ascending, err := acct.CreateTable(ctx, "ReadingsOldestFirst")
	if err != nil {
		return err
	}
	inverted, err := acct.CreateTable(ctx, "Readings")
	if err != nil {
		return err
	}
	for i := 0; i < readings; i++ {
		r := readingAt(i)
		r.RowKey = localtable.Int64Key(localtable.TimeToTicks(r.At))
		if err := insert(ctx, ascending, r); err != nil {
			return err
		}
		r.RowKey = localtable.InvertedTicksKey(r.At)
		if err := insert(ctx, inverted, r); err != nil {
			return err
		}
	}
	last := readingAt(readings - 1).At
	fmt.Fprintf(w, "%d readings of %s, one a minute until %s, stored with both key orders\n", readings, sensor, last.Format(time.RFC3339))
	first := readingAt(readings - 1)
	fmt.Fprintf(w, "the newest reading's RowKey: %s (ascending: %s)\n\n",
		localtable.InvertedTicksKey(first.At), localtable.Int64Key(localtable.TimeToTicks(first.At)))

	// The newest ten, inverted: the first ten of the partition.
	part := filter.PartitionKey().Eq(sensor)
	page, err := inverted.Query(ctx, &localtable.QueryOptions{Filter: part, Limit: 10})
	if err != nil {
		return err
	}
	show.Cost(w, "newest 10, inverted ticks (limit 10)", part, page.Stats)
	var newest []Reading
	for _, e := range page.Entities {
		var r Reading
		if err := localtable.Unmarshal(e, &r); err != nil {
			return err
		}
		at, err := localtable.ParseInvertedTicksKey(r.RowKey)
		if err != nil || !at.Equal(r.At) {
			return fmt.Errorf("RowKey %s parses to %v, %v; the reading is at %v", r.RowKey, at, err, r.At)
		}
		newest = append(newest, r)
	}
	for _, r := range newest[:3] {
		fmt.Fprintf(w, "  %s  %.1f °C\n", r.At.Format("2006-01-02 15:04"), r.Celsius)
	}
	fmt.Fprintln(w, "  …")

	// The newest ten, ascending: the last ten, so read everything.
	all, err := show.Query(ctx, ascending, &localtable.QueryOptions{Filter: part})
	if err != nil {
		return err
	}
	show.Cost(w, "newest 10, ascending ticks (read all)", part, all.Stats)
	same := true
	for i, e := range all.Entities[len(all.Entities)-10:] {
		var r Reading
		if err := localtable.Unmarshal(e, &r); err != nil {
			return err
		}
		same = same && r.At.Equal(newest[9-i].At)
	}
	fmt.Fprintf(w, "  the same ten readings: %v\n\n", same)

	// A window [from, to) is a RowKey range with its bounds swapped: the
	// inverted key of to (exclusive) comes first.
	from, to := last.Add(-2*time.Hour), last.Add(-time.Hour)
	window := filter.And(part,
		filter.RowKey().Gt(localtable.InvertedTicksKey(to)),
		filter.RowKey().Le(localtable.InvertedTicksKey(from)))
	r, err := show.Filter(ctx, w, "readings "+from.Format("15:04")+"-"+to.Format("15:04")+" (RowKey range)", inverted, window)
	if err != nil {
		return err
	}
	var newestIn, oldestIn Reading
	if err := localtable.Unmarshal(r.Entities[0], &newestIn); err != nil {
		return err
	}
	if err := localtable.Unmarshal(r.Entities[len(r.Entities)-1], &oldestIn); err != nil {
		return err
	}
	fmt.Fprintf(w, "  newest first: %s … %s\n", newestIn.At.Format("15:04"), oldestIn.At.Format("15:04"))
	return nil
}

func insert(ctx context.Context, tbl *localtable.Table, r Reading) error {
	e, err := localtable.Marshal(r)
	if err != nil {
		return err
	}
	_, err = tbl.Insert(ctx, e)
	return err
}
