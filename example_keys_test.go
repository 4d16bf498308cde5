package localtable_test

import (
	"context"
	"fmt"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

func ExampleInt64Key() {
	for _, n := range []int64{-42, 7, 1000} {
		fmt.Println(localtable.Int64Key(n))
	}
	n, err := localtable.ParseInt64Key("0000000000000001000")
	fmt.Println(n, err)
	// Output:
	// -9999999999999999957
	// 0000000000000000007
	// 0000000000000001000
	// 1000 <nil>
}

// The log tail pattern: RowKeys that put the newest entity first, so the
// latest n are the first n of the partition.
func ExampleInvertedTicksKey() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Log")
	start := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range 5 {
		at := start.Add(time.Duration(i) * time.Minute)
		tbl.Insert(ctx, localtable.Entity{PartitionKey: "web01", RowKey: localtable.InvertedTicksKey(at)})
	}
	for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: filter.PartitionKey().Eq("web01"), Limit: 2}) {
		if err != nil {
			panic(err)
		}
		at, _ := localtable.ParseInvertedTicksKey(e.RowKey)
		fmt.Println(e.RowKey, at.Format(time.TimeOnly))
	}
	// Output:
	// 2516930169599999999 09:04:00
	// 2516930170199999999 09:03:00
}

func ExampleCompoundKey() {
	k := localtable.CompoundKey("Sales", "Jones, Ann", "a/b")
	fmt.Println(k)
	parts, err := localtable.SplitCompoundKey(k)
	fmt.Printf("%q %v\n", parts, err)
	// Parts order their keys: a key sorts before the keys that extend it.
	fmt.Println(localtable.CompoundKey("a") < localtable.CompoundKey("a", "b"),
		localtable.CompoundKey("a", "b") < localtable.CompoundKey("a", "c"),
		localtable.CompoundKey("a", "zzz") < localtable.CompoundKey("a b"))
	// Output:
	// Sales!Jones,"20Ann!a.2Fb
	// ["Sales" "Jones, Ann" "a/b"] <nil>
	// true true true
}

func ExampleCompoundKeyRange() {
	// Reviews keyed CompoundKey(employee, year): one employee's reviews are
	// one RowKey range.
	lo, hi := localtable.CompoundKeyRange("000123")
	fmt.Println(lo, hi)
	for _, k := range []string{
		localtable.CompoundKey("000123", "2011"),
		localtable.CompoundKey("000123", "2012"),
		localtable.CompoundKey("000123"),
		localtable.CompoundKey("0001234", "2012"),
	} {
		fmt.Println(k, lo <= k && k < hi)
	}
	// Output:
	// 000123! 000123"
	// 000123!2011 true
	// 000123!2012 true
	// 000123 false
	// 0001234!2012 false
}

func ExampleKeyRange_Intersect() {
	partition := localtable.KeyRange{Start: localtable.PartitionStart("Sales"), End: localtable.PartitionEnd("Sales")}
	fromM := localtable.KeyRange{Start: localtable.KeyAt("Sales", "M")}
	r, ok := partition.Intersect(fromM)
	fmt.Println(ok, r.Contains("Sales", "Smith"), r.Contains("Sales", "Jones"), r.Contains("Support", "Smith"))
	_, ok = partition.Intersect(localtable.KeyRange{End: localtable.PartitionStart("Sales")})
	fmt.Println(ok)
	// Output:
	// true true false false
	// false
}
