package localtable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

func seedLog(ctx context.Context, tbl *localtable.Table) {
	for i := 0; i < 5; i++ {
		tbl.Insert(ctx, localtable.Entity{PartitionKey: "web01", RowKey: fmt.Sprintf("%03d", i),
			Properties: localtable.Properties{"Level": localtable.StringValue([]string{"info", "warn", "error"}[i%3])}})
	}
	tbl.Insert(ctx, localtable.Entity{PartitionKey: "web02", RowKey: "000",
		Properties: localtable.Properties{"Level": localtable.StringValue("error")}})
}

func ExampleTable_Query() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Log")
	seedLog(ctx, tbl)

	f, err := filter.Parse("PartitionKey eq 'web01' and RowKey ge '001' and RowKey lt '004'")
	if err != nil {
		panic(err)
	}
	page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: f, PageSize: 2})
	if err != nil {
		panic(err)
	}
	for _, e := range page.Entities {
		fmt.Println(e.PartitionKey, e.RowKey, e.Properties["Level"])
	}
	fmt.Println("more:", !page.Continuation.IsZero(), "scanned:", page.Stats.Scanned)

	page, _ = tbl.Query(ctx, &localtable.QueryOptions{Filter: f, PageSize: 2, Continuation: page.Continuation})
	for _, e := range page.Entities {
		fmt.Println(e.PartitionKey, e.RowKey, e.Properties["Level"])
	}
	fmt.Println("more:", !page.Continuation.IsZero())
	// Output:
	// web01 001 warn
	// web01 002 error
	// more: true scanned: 2
	// web01 003 info
	// more: false
}

func ExampleTable_QueryAll() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Log")
	seedLog(ctx, tbl)

	// Built from typed values: no string concatenation, no quoting bugs.
	errorsOnly := filter.Prop("Level").Eq("error")
	for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: errorsOnly, Select: []string{"Level"}}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.PartitionKey, e.RowKey)
	}
	// Output:
	// web01 002
	// web02 000
}

func ExampleAccount_ListTables() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	for _, name := range []string{"Logs20240101", "Logs20240102", "Logs20240103", "Users"} {
		acct.CreateTable(ctx, name)
	}
	f, _ := filter.Parse("TableName ge 'Logs' and TableName lt 'Logt'")
	page, _ := acct.ListTables(ctx, &localtable.ListTablesOptions{Filter: f, PageSize: 2})
	fmt.Println(page.Tables, page.NextTableName)
	// Output: [{Logs20240101} {Logs20240102}] Logs20240103
}

func ExampleAccount_DeleteTable() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	// High-volume delete: one table per day, dropped whole (one range
	// deletion, however many entities it holds).
	day, _ := acct.CreateTable(ctx, "Logs20240101")
	day.Insert(ctx, localtable.Entity{PartitionKey: "web01", RowKey: "000"})
	fmt.Println(acct.DeleteTable(ctx, "Logs20240101"))
	_, err := acct.GetTable(ctx, "Logs20240101")
	fmt.Println(localtable.ErrorCodeOf(err))
	// Output:
	// <nil>
	// TableNotFound
}

func ExampleAccount_CreateTableIfNotExists() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	acct.CreateTable(ctx, "Orders")
	tbl, err := acct.CreateTableIfNotExists(ctx, "ORDERS")
	fmt.Println(tbl.Name(), err)
	// Output: Orders <nil>
}

func ExampleQueryAs() {
	type LogLine struct {
		PartitionKey string
		RowKey       string
		Level        string
	}
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Log")
	seedLog(ctx, tbl)

	for line, err := range localtable.QueryAs[LogLine](ctx, tbl, &localtable.QueryOptions{Filter: filter.Prop("Level").Ne("info")}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(line.PartitionKey, line.RowKey, line.Level)
	}
	// Output:
	// web01 001 warn
	// web01 002 error
	// web01 004 warn
	// web02 000 error
}

// Limit asks for the first n matches; PageSize only sizes the pages.
func ExampleTable_QueryAll_limit() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Log")
	seedLog(ctx, tbl)

	for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: filter.Prop("Level").Ne("info"), Limit: 2}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.PartitionKey, e.RowKey)
	}
	// Output:
	// web01 001
	// web01 002
}

func ExampleTable_Count() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Log")
	seedLog(ctx, tbl)

	all, _ := tbl.Count(ctx, nil)
	errs, err := tbl.Count(ctx, filter.Prop("Level").Eq("error"))
	fmt.Println(all, errs, err)
	// Output: 6 2 <nil>
}

func ExampleTable_Partitions() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Log")
	seedLog(ctx, tbl)

	for pk, err := range tbl.Partitions(ctx) {
		if err != nil {
			panic(err)
		}
		fmt.Println(pk)
	}
	// Output:
	// web01
	// web02
}

// Rows reads each entity in place: nothing is decoded but the properties
// asked for, and a loop allocates nothing per entity. What a Row returns
// is valid until the loop moves on: keep a copy (strings.Clone,
// Row.Entity) of what must outlive the step.
func ExampleTable_Rows() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Log")
	seedLog(ctx, tbl)

	var warnings, errs int
	var lastError string
	for r, err := range tbl.Rows(ctx, &localtable.QueryOptions{Filter: filter.Prop("PartitionKey").Eq("web01")}) {
		if err != nil {
			panic(err)
		}
		level, _ := r.Property("Level")
		switch level.String() { // a view of the stored bytes: compared, not kept
		case "warn":
			warnings++
		case "error":
			errs++
			lastError = strings.Clone(r.RowKey()) // kept past the step: a copy
		}
	}
	fmt.Println(warnings, errs, lastError)
	// Output:
	// 2 1 002
}

func ExampleTable_GetRow() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Log")
	seedLog(ctx, tbl)

	var row localtable.Row // reused by every read: a read allocates nothing
	for _, rk := range []string{"001", "002", "009"} {
		if err := tbl.GetRow(ctx, "web01", rk, &row); err != nil {
			fmt.Println(rk, errors.Is(err, localtable.ErrEntityNotFound))
			continue
		}
		level, _ := row.Property("Level") // valid until the next GetRow into row
		fmt.Println(rk, level.String())
	}
	// Output:
	// 001 warn
	// 002 error
	// 009 true
}
