// Command prepend-append shows the prepend/append anti-pattern and its
// fix: keys that grow with time send every insert to the same partition,
// the end of the key space, where one partition's throughput bounds the
// whole table. Spreading the keys spreads the load.
//
// The problem: an order-event log keyed PartitionKey = the minute,
// RowKey = a sequence number. At any moment all writers append to the
// newest partition; the others sit idle. The service serves a partition
// from one server (about 2,000 entities per second per partition), so the
// table's write rate is one partition's.
//
// The fix the design guide gives: put something other than time first.
// Here PartitionKey is a hash bucket of the order id ("b07"), RowKey the
// time and id, so concurrent writes land on 16 partitions at once.
//
// The trade-off the guide names: reading "the newest events" now means a
// query per bucket and a merge of their results, instead of one range
// query; choose by which the application does more.
//
// What the program proves: with time-ordered keys, every write of each
// second lands in one partition (the hottest partition takes 100% of the
// writes at every moment); with hashed keys the busiest takes a small share;
// and the newest events still read back correctly, with 16 range queries
// whose merge reads about as many entities as the one partition query.
package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/localtable/localtable"
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
	events  = 3600
	perSec  = 20 // events a second: three minutes of them
	buckets = 16
)

var start = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// Event i happens at start + i/perSec seconds, for an order of its own.
func eventTime(i int) time.Time { return start.Add(time.Duration(i) * time.Second / perSec) }
func orderID(i int) string      { return fmt.Sprintf("order%05d", (i*7919)%100000) }

// appendKeys: time first, the anti-pattern.
func appendKeys(i int) (pk, rk string) {
	t := eventTime(i)
	return t.Format("200601021504"), fmt.Sprintf("%s_%06d", t.Format("05.000"), i)
}

// spreadKeys: a hash bucket of the order first, then time.
func spreadKeys(i int) (pk, rk string) {
	h := fnv.New32a()
	h.Write([]byte(orderID(i)))
	return fmt.Sprintf("b%02d", h.Sum32()%buckets), fmt.Sprintf("%s_%06d", eventTime(i).Format("20060102T150405.000"), i)
}

func run(ctx context.Context, acct *localtable.Account, w io.Writer) error {
	for _, design := range []struct {
		table string
		keys  func(int) (string, string)
	}{{"EventsByTime", appendKeys}, {"EventsByBucket", spreadKeys}} {
		tbl, err := acct.CreateTable(ctx, design.table)
		if err != nil {
			return err
		}
		// Writes per partition, second by second.
		hottest, seconds := 0.0, 0
		perPartition := map[string]int{}
		second := map[string]int{}
		for i := 0; i < events; i++ {
			pk, rk := design.keys(i)
			_, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: localtable.Properties{
				"Order": localtable.StringValue(orderID(i)), "At": localtable.DateTimeValue(eventTime(i)),
			}})
			if err != nil {
				return err
			}
			perPartition[pk]++
			second[pk]++
			if (i+1)%perSec == 0 {
				top := 0
				for _, n := range second {
					top = max(top, n)
				}
				hottest += float64(top) / perSec
				seconds++
				clear(second)
			}
		}
		fmt.Fprintf(w, "%-15s %d events over %2d partitions; each second, the busiest partition took %3.0f%% of the writes (mean)\n",
			design.table+":", events, len(perPartition), 100*hottest/float64(seconds))
	}

	// The trade-off: the newest 10 events, by each design.
	const n = 10
	fmt.Fprintf(w, "\nthe newest %d events:\n", n)
	newest := eventTime(events - 1).Format("200601021504")
	byTime, scannedByTime, err := newestByTime(ctx, acct.Table("EventsByTime"), newest, n)
	if err != nil {
		return err
	}
	byBucket, scanned, err := newestByBucket(ctx, acct.Table("EventsByBucket"), n)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  time-ordered keys: 1 partition query, %d entities scanned\n", scannedByTime)
	fmt.Fprintf(w, "  hashed keys:       %d partition queries, %d entities scanned, merged\n", buckets, scanned)
	fmt.Fprintf(w, "  same events: %v (%s … %s)\n", slices.Equal(byTime, byBucket), byTime[0], byTime[n-1])
	return nil
}

// newestByTime reads the last n events of the newest minute's partition.
func newestByTime(ctx context.Context, tbl *localtable.Table, minute string, n int) ([]string, int, error) {
	var ids []string
	for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: filter.PartitionKey().Eq(minute)}) {
		if err != nil {
			return nil, 0, err
		}
		ids = append(ids, e.RowKey[strings.IndexByte(e.RowKey, '_')+1:])
	}
	return ids[len(ids)-n:], len(ids), nil
}

// newestByBucket reads each bucket's events since a minute before the
// newest and merges them. A real application would read each bucket
// newest-first (see the log-tail example) to read only n per bucket.
func newestByBucket(ctx context.Context, tbl *localtable.Table, n int) ([]string, int, error) {
	since := eventTime(events - 1).Add(-time.Minute).Format("20060102T150405.000")
	var all []string
	scanned := 0
	for b := 0; b < buckets; b++ {
		f := filter.And(filter.PartitionKey().Eq(fmt.Sprintf("b%02d", b)), filter.RowKey().Ge(since))
		opts := localtable.QueryOptions{Filter: f}
		for {
			page, err := tbl.Query(ctx, &opts)
			if err != nil {
				return nil, 0, err
			}
			scanned += page.Stats.Scanned
			for _, e := range page.Entities {
				all = append(all, e.RowKey)
			}
			if page.Continuation.IsZero() {
				break
			}
			opts.Continuation = page.Continuation
		}
	}
	slices.Sort(all)
	ids := make([]string, 0, n)
	for _, rk := range all[len(all)-n:] {
		ids = append(ids, rk[strings.IndexByte(rk, '_')+1:])
	}
	return ids, scanned, nil
}
