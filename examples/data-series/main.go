// Command data-series shows the data series pattern: a day of hourly page
// views for a site is one entity with 24 properties (H00 … H23), not 24
// entities, so the whole series is one point read and each hour's count is
// one merge.
//
// The problem: an entity per hour makes reading a day read 24 entities,
// and writing it take 24 operations.
//
// The pattern: store the series in one entity. Merge writes only the
// properties it carries and keeps the others, so writers of different hours
// need no coordination at all; writers of the same hour (here, increments)
// use the ETag they read and retry on a conflict.
//
// The trade-offs the design guide names: a series must fit one entity (252
// properties, 1 MiB); every write of the series rewrites one entity, which
// is one partition's throughput; concurrent writers of the same property
// need optimistic concurrency.
//
// What the program proves: the day is 1 entity read against 24, writers of
// different hours all land through merges without ETags, and 8 goroutines
// incrementing one hour with ETag retries lose no increment.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync"

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
	site = "contoso.com"
	day  = "20261124"
)

func hour(h int) string { return fmt.Sprintf("H%02d", h) }

// views is the fixed number of page views in hour h.
func views(h int) int32 { return int32(100 + 37*h%250) }

func run(ctx context.Context, acct *localtable.Account, w io.Writer) error {
	series, err := acct.CreateTable(ctx, "PageViews")
	if err != nil {
		return err
	}
	perHour, err := acct.CreateTable(ctx, "PageViewsByHour")
	if err != nil {
		return err
	}

	// 24 writers, one per hour, all at once: each merges its own hour into
	// the day's entity, creating it if needed, with no ETag.
	var wg sync.WaitGroup
	errs := make(chan error, 48)
	for h := 0; h < 24; h++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := series.Upsert(ctx, localtable.Entity{PartitionKey: site, RowKey: day,
				Properties: localtable.Properties{hour(h): localtable.Int32Value(views(h))}}, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})

			errs <- err
			// The alternative design: an entity per hour.
			_, err = perHour.Insert(ctx, localtable.Entity{PartitionKey: site, RowKey: day + "_" + hour(h),
				Properties: localtable.Properties{"Views": localtable.Int32Value(views(h))}})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "24 writers merged one hour each into the day's entity, concurrently and without ETags")

	// Read the day both ways.
	one, err := show.Filter(ctx, w, "the day as one entity (point query)", series,
		filter.And(filter.PartitionKey().Eq(site), filter.RowKey().Eq(day)))
	if err != nil {
		return err
	}
	many, err := show.Filter(ctx, w, "the day as 24 entities (range query)", perHour,
		filter.And(filter.PartitionKey().Eq(site), filter.RowKey().Ge(day+"_"), filter.RowKey().Lt(day+"`")))
	if err != nil {
		return err
	}
	total1, total2 := int32(0), int32(0)
	for h := 0; h < 24; h++ {
		total1 += one.Entities[0].Properties[hour(h)].Int32()
	}
	for _, e := range many.Entities {
		total2 += e.Properties["Views"].Int32()
	}
	fmt.Fprintf(w, "total views: %d (series entity), %d (entities per hour); the series has %d hourly properties\n\n",
		total1, total2, len(one.Entities[0].Properties))

	// Increments of the same hour need the ETag: read, add, write back if
	// unchanged, else retry.
	const incrementers, each = 8, 25
	var wg2 sync.WaitGroup
	errc := make(chan error, incrementers)
	for g := 0; g < incrementers; g++ {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			for i := 0; i < each; i++ {
				if _, err := increment(ctx, series, hour(9)); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	wg2.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			return err
		}
	}
	e, err := series.Get(ctx, site, day, nil)
	if err != nil {
		return err
	}
	got := e.Properties[hour(9)].Int32()
	fmt.Fprintf(w, "%d goroutines added 1 to H09 %d times each under ETags: H09 went from %d to %d (lost increments: %d)\n",
		incrementers, each, views(9), got, views(9)+incrementers*each-got)
	return nil
}

// increment adds one to the property prop of the day's entity, retrying on
// ErrConditionNotMet; it returns the number of retries.
func increment(ctx context.Context, tbl *localtable.Table, prop string) (int, error) {
	for retries := 0; ; retries++ {
		e, err := tbl.Get(ctx, site, day, &localtable.GetOptions{Select: []string{prop}})
		if err != nil {
			return retries, err
		}
		e.Properties[prop] = localtable.Int32Value(e.Properties[prop].Int32() + 1)
		_, err = tbl.Update(ctx, e, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: e.ETag})
		if errors.Is(err, localtable.ErrConditionNotMet) {
			continue
		}
		return retries, err
	}
}
