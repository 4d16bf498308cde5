package localtable_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage/memory"
)

// Each test case starts from the same fixture: a checkpoint taken once,
// restored before each case, undoes whatever the case wrote, tables
// included.
func ExampleAccount_Checkpoint() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Orders")
	tbl.Insert(ctx, localtable.Entity{PartitionKey: "fixture", RowKey: "1"})
	cp, err := acct.Checkpoint(ctx)
	if err != nil {
		panic(err)
	}
	defer cp.Close() // before acct.Close, which was deferred first

	for _, name := range []string{"a", "b"} {
		if err := acct.Restore(ctx, cp); err != nil {
			panic(err)
		}
		tbl.Insert(ctx, localtable.Entity{PartitionKey: "case", RowKey: name})
		acct.CreateTable(ctx, "Scratch")
		n, _ := tbl.Count(ctx, nil)
		fmt.Println(name, n)
	}
	acct.Restore(ctx, cp)
	_, err = acct.GetTable(ctx, "Scratch")
	fmt.Println(errors.Is(err, localtable.ErrTableNotFound))
	// Output:
	// a 2
	// b 2
	// true
}

// Verify reads the whole store and reports what localtable would not have
// written: here a key that something else put in the account's engine.
func ExampleAccount_Verify() {
	ctx := context.Background()
	eng := memory.New(nil)
	acct, _ := localtable.Open(&localtable.Options{Engine: eng})
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Orders")
	for _, k := range [][2]string{{"alice", "1"}, {"alice", "2"}, {"bob", "1"}} {
		tbl.Insert(ctx, localtable.Entity{PartitionKey: k[0], RowKey: k[1]})
	}
	report, err := acct.Verify(ctx)
	if err != nil {
		panic(err) // the store could not be read
	}
	fmt.Println(report.OK())
	for _, t := range report.Tables {
		fmt.Println(t.Name, t.Entities, t.Partitions)
	}

	// Only the Account may write to its engine; a stray key is a problem.
	b := eng.NewBatch()
	b.Set([]byte("stray"), []byte("?"))
	b.Commit(false)
	report, _ = acct.Verify(ctx)
	fmt.Println(report.OK(), report.Problems)
	// Output:
	// true
	// Orders 3 2
	// false [unknown key "stray"]
}

// Stored access policies: shared access signatures that name a policy's ID
// take their start, expiry and permissions from it (see package server).
func ExampleTable_SetAccessPolicy() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Orders")
	err := tbl.SetAccessPolicy(ctx, []localtable.AccessPolicy{
		{ID: "readers", Expiry: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), Permission: "r"},
		{ID: "writers", Permission: "raud"},
	})
	fmt.Println(err)
	policies, _ := tbl.GetAccessPolicy(ctx)
	for _, p := range policies {
		fmt.Println(p.ID, p.Permission, p.Expiry.IsZero())
	}
	err = tbl.SetAccessPolicy(ctx, []localtable.AccessPolicy{{ID: "bad", Permission: "x"}})
	fmt.Println(errors.Is(err, localtable.ErrInvalidInput))
	// Output:
	// <nil>
	// readers r false
	// writers raud true
	// true
}
