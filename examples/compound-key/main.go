// Command compound-key shows the compound key pattern: a RowKey made of
// several values, so that related entities are found with a point query
// for one combination, or a range query for all combinations that share a
// leading value.
//
// The problem: employees have a performance review per year. Keyed by a
// review id, "Jones's 2024 review" and "all of Jones's reviews" are scans
// of the department with a property filter.
//
// The pattern: the review's RowKey is CompoundKey(employee id, year),
// e.g. "0000000000000000123!2024" (Int64Key pads to 19 digits). One review is a point query; an employee's reviews
// are the RowKey range CompoundKeyRange(employee id); and they come back
// in year order. CompoundKey escapes the characters a key may not hold
// (/ \ # ? and control characters) and its separator, reversibly and
// without disturbing the order, so values such as "R&D/Team #2" can be key
// parts too.
//
// The trade-offs the design guide names: the parts must be known to query
// (a review by year alone, for every employee, is still a scan); numbers
// are padded so they sort as numbers (Int64Key); the combined key must
// stay within 1 KiB.
//
// What the program proves: the point query reads 1 entity and the range
// reads exactly the employee's reviews, where the filter on properties
// reads the whole partition; keys with forbidden characters round-trip
// through SplitCompoundKey and are accepted by the table.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

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

// Review is one employee's review for one year.
type Review struct {
	PartitionKey string // the department
	RowKey       string // CompoundKey(employee id, year)
	EmployeeID   int64
	Year         int32
	Rating       int32
	Reviewer     string
}

const (
	dept      = "Sales"
	employees = 200
	firstYear = 2019
	years     = 6
)

func reviewKey(emp int64, year int32) string {
	return localtable.CompoundKey(localtable.Int64Key(emp), fmt.Sprint(year))
}

func run(ctx context.Context, acct *localtable.Account, w io.Writer) error {
	tbl, err := acct.CreateTable(ctx, "Reviews")
	if err != nil {
		return err
	}
	for emp := int64(1); emp <= employees; emp++ {
		var acts []localtable.Action
		for y := int32(firstYear); y < firstYear+years; y++ {
			e, err := localtable.Marshal(Review{PartitionKey: dept, RowKey: reviewKey(emp, y), EmployeeID: emp,
				Year: y, Rating: int32(1 + (emp*int64(y))%5), Reviewer: fmt.Sprintf("manager%02d", emp%7)})
			if err != nil {
				return err
			}
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: e})
		}
		if _, err := tbl.Transact(ctx, acts); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%d reviews: %d employees × %d years, RowKey = CompoundKey(Int64Key(id), year)\n", employees*years, employees, years)
	fmt.Fprintf(w, "employee 123's 2024 review has RowKey %s\n\n", reviewKey(123, 2024))

	one := filter.And(filter.PartitionKey().Eq(dept), filter.RowKey().Eq(reviewKey(123, 2024)))
	r, err := show.Filter(ctx, w, "employee 123, 2024 (point query)", tbl, one)
	if err != nil {
		return err
	}
	var rev Review
	if err := localtable.Unmarshal(r.Entities[0], &rev); err != nil {
		return err
	}
	fmt.Fprintf(w, "  rating %d by %s\n", rev.Rating, rev.Reviewer)

	lo, hi := localtable.CompoundKeyRange(localtable.Int64Key(123))
	byRange := filter.And(filter.PartitionKey().Eq(dept), filter.RowKey().Ge(lo), filter.RowKey().Lt(hi))
	r, err = show.Filter(ctx, w, "employee 123, every year (range)", tbl, byRange)
	if err != nil {
		return err
	}
	fmt.Fprint(w, "  years:")
	for _, e := range r.Entities {
		parts, err := localtable.SplitCompoundKey(e.RowKey)
		if err != nil {
			return err
		}
		fmt.Fprint(w, " ", parts[1])
	}
	fmt.Fprintln(w)
	byProps := filter.And(filter.PartitionKey().Eq(dept), filter.Prop("EmployeeID").Eq(123))
	if _, err := show.Filter(ctx, w, "employee 123, by property (partition scan)", tbl, byProps); err != nil {
		return err
	}

	// Parts with characters a key may not hold.
	fmt.Fprintln(w)
	parts := []string{"R&D/Team #2", "what?", `back\slash`, "tab\there"}
	k := localtable.CompoundKey(parts...)
	if err := localtable.ValidateRowKey(k); err != nil {
		return err
	}
	if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "teams", RowKey: k}); err != nil {
		return err
	}
	back, err := localtable.SplitCompoundKey(k)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "CompoundKey(%q)\n  = %s (a valid key, stored)\n  splits back to %q\n", parts, k, back)
	return nil
}
