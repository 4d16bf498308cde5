package localtable_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
)

func ExampleTable_SetExpiry() {
	ctx := context.Background()
	// A manual clock, safe for concurrent use: the account calls it from
	// its own goroutines too (the sweeper, when Interval is not -1).
	clock := localtabletest.NewClock(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	acct, _ := localtable.Open(&localtable.Options{
		Clock:  clock.Now,
		Expiry: &localtable.ExpiryOptions{Interval: -1}, // sweep by hand below
	})
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Sessions")
	tbl.SetExpiry(ctx, "ExpiresAt") // declares and builds an index on ExpiresAt
	tbl.Insert(ctx, localtable.Entity{PartitionKey: "u1", RowKey: "s1", Properties: localtable.Properties{
		"ExpiresAt": localtable.DateTimeValue(clock.Now().Add(30 * time.Minute)),
	}})

	clock.Advance(30 * time.Minute) // at ExpiresAt: expired, invisible at once
	_, err := tbl.Get(ctx, "u1", "s1", nil)
	fmt.Println(errors.Is(err, localtable.ErrEntityNotFound))
	n, _ := tbl.Count(ctx, nil)
	fmt.Println(n)
	deleted, _ := acct.SweepExpired(ctx) // what the background sweeper does
	fmt.Println(deleted)
	prop, _ := tbl.Expiry(ctx)
	fmt.Println(prop)
	// Output:
	// true
	// 0
	// 1
	// ExpiresAt
}
