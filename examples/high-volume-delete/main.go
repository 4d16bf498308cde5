// Command high-volume-delete shows the high-volume delete pattern: keep the
// entities that expire together in a table of their own (here, one table of
// login attempts per day) and delete the table when they expire, instead of
// finding and deleting them one by one.
//
// The problem: login attempts are keyed by user (PartitionKey) and time
// (RowKey), which suits the lookups. Deleting the attempts older than a day
// then means finding them in every partition, a scan of the whole table,
// and one delete per entity, in transactions of at most 100 per partition.
//
// The pattern: one table per day, "Logins20261101", … Expiring a day is
// one table delete, whatever the day holds. The trade-offs the design guide
// names: a query across days has to read several tables; the application
// must create each day's table before it is needed; and the service keeps a
// deleted table's name for about 40 seconds before it can be created again
// (TableBeingDeleted), so names should not be reused at once. localtable
// frees the name at once by default (its test server can emulate the
// delay).
//
// What the program proves: the anti-pattern reads every entity of the table
// and issues a delete per expired entity; the pattern deletes a day in one
// operation (on pebble, one range deletion), and both leave the same data
// behind.
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
	users         = 200
	attemptsByDay = 10 // per user
)

var firstDay = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// attempt is the n-th login attempt of user u on day d.
func attempt(u, d, n int) localtable.Entity {
	at := firstDay.AddDate(0, 0, d).Add(time.Duration(n*137+u) * time.Minute)
	return localtable.Entity{
		PartitionKey: fmt.Sprintf("user%04d", u),
		RowKey:       at.Format("20060102T150405Z"),
		Properties: localtable.Properties{
			"Success": localtable.BoolValue(n%4 != 0),
			"IP":      localtable.StringValue(fmt.Sprintf("10.0.%d.%d", u%256, n)),
		},
	}
}

func dayTable(d int) string { return "Logins" + firstDay.AddDate(0, 0, d).Format("20060102") }

func run(ctx context.Context, acct *localtable.Account, w io.Writer) error {
	const days = 3
	// The anti-pattern: one table for all days.
	all, err := acct.CreateTable(ctx, "LoginAttempts")
	if err != nil {
		return err
	}
	// The pattern: a table per day.
	for d := 0; d < days; d++ {
		tbl, err := acct.CreateTable(ctx, dayTable(d))
		if err != nil {
			return err
		}
		for u := 0; u < users; u++ {
			acts := make([]localtable.Action, 0, attemptsByDay)
			for n := 0; n < attemptsByDay; n++ {
				acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: attempt(u, d, n)})
			}
			if _, err := tbl.Transact(ctx, acts); err != nil {
				return err
			}
			if _, err := all.Transact(ctx, acts); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(w, "%d login attempts a day for %d days, stored both ways\n\n", users*attemptsByDay, days)

	// Expire day 0 in the single table: find its entities in every
	// partition (a RowKey range without a PartitionKey is a full scan),
	// then delete them in transactions of one partition each.
	fmt.Fprintln(w, "one table for all days: expire", firstDay.Format("2006-01-02"))
	next := firstDay.AddDate(0, 0, 1).Format("20060102")
	expired := filter.RowKey().Lt(next)
	r, err := show.Query(ctx, all, &localtable.QueryOptions{Filter: expired, Select: []string{}})
	if err != nil {
		return err
	}
	show.Cost(w, "  find the expired attempts", expired, r.Stats)
	deletes, txs := 0, 0
	for i := 0; i < len(r.Entities); {
		j := i
		var acts []localtable.Action
		for ; j < len(r.Entities) && r.Entities[j].PartitionKey == r.Entities[i].PartitionKey && len(acts) < localtable.MaxTransactionActions; j++ {
			acts = append(acts, localtable.Action{Type: localtable.ActionDelete, Entity: r.Entities[j], IfMatch: localtable.ETagAny})
		}
		if _, err := all.Transact(ctx, acts); err != nil {
			return err
		}
		deletes += len(acts)
		txs++
		i = j
	}
	fmt.Fprintf(w, "  deleted %d entities in %d transactions (one per partition)\n\n", deletes, txs)

	// The pattern: drop the day's table.
	fmt.Fprintln(w, "a table per day: expire", firstDay.Format("2006-01-02"))
	if err := acct.DeleteTable(ctx, dayTable(0)); err != nil {
		return err
	}
	fmt.Fprintf(w, "  deleted table %s: 1 operation, no entity read\n\n", dayTable(0))

	// Both designs now hold the same attempts.
	left, err := count(ctx, all, nil)
	if err != nil {
		return err
	}
	perDay := 0
	fmt.Fprintln(w, "what is left:")
	for info, err := range acct.Tables(ctx, nil) {
		if err != nil {
			return err
		}
		if info.Name == all.Name() {
			continue
		}
		n, err := count(ctx, acct.Table(info.Name), nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s: %d attempts\n", info.Name, n)
		perDay += n
	}
	fmt.Fprintf(w, "  %s: %d attempts\n", all.Name(), left)
	if left != perDay {
		return fmt.Errorf("the designs disagree: %d attempts in one table, %d in the day tables", left, perDay)
	}

	// The trade-off: a question over several days reads several tables.
	failed := filter.And(filter.PartitionKey().Eq("user0007"), filter.Prop("Success").Eq(false))
	n := 0
	for d := 1; d < days; d++ {
		c, err := count(ctx, acct.Table(dayTable(d)), failed)
		if err != nil {
			return err
		}
		n += c
	}
	fmt.Fprintf(w, "\nuser0007's failed logins over the last %d days: %d (one query per day table)\n", days-1, n)
	return nil
}

// count returns the number of entities of tbl that f selects (nil: all).
func count(ctx context.Context, tbl *localtable.Table, f localtable.Predicate) (int, error) {
	r, err := show.Query(ctx, tbl, &localtable.QueryOptions{Filter: f, Select: []string{}})
	return len(r.Entities), err
}
