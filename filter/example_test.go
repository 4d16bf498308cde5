package filter_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

func ExampleParse() {
	f, err := filter.Parse("PartitionKey eq 'orders' and (30 lt Age or Name eq 'it''s')")
	if err != nil {
		panic(err)
	}
	e := &localtable.Entity{PartitionKey: "orders", RowKey: "1"}
	e.Set("Age", localtable.Int32Value(31))
	fmt.Println(f)
	fmt.Println(f.Match(e))
	// Output:
	// PartitionKey eq 'orders' and (Age gt 30 or Name eq 'it''s')
	// true
}

func ExampleParse_error() {
	_, err := filter.Parse("Age gt 30 and")
	var se *filter.SyntaxError
	fmt.Println(errors.As(err, &se), se.Offset, se.Msg)
	fmt.Println(errors.Is(err, localtable.ErrInvalidInput))
	// Output:
	// true 13 expected a property, a literal, 'not' or '(', found end of filter
	// true
}

func ExampleFilter_String() {
	f, _ := filter.Parse("((Price le 2D)) and Big eq 12l and not Done and T eq datetime'2008-07-10T00:00:00.1000000Z'")
	fmt.Println(f.String())
	// Output:
	// Price le 2.0 and Big eq 12L and not (Done eq true) and T eq datetime'2008-07-10T00:00:00.1Z'
}

func ExamplePartitionKey() {
	f := filter.And(
		filter.PartitionKey().Eq("it's"),
		filter.RowKey().Ge("a"),
		filter.Or(filter.Prop("Age").Gt(localtable.Int32Value(30)), filter.Prop("Big").Lt(filter.Int64(5))),
	)
	fmt.Println(f)
	// Output:
	// PartitionKey eq 'it''s' and RowKey ge 'a' and (Age gt 30 or Big lt 5L)
}

func ExampleFormat() {
	f, err := filter.Format("PartitionKey eq {} and Age gt {} and Name ne '{}'", "it's", int32(5))
	if err != nil {
		panic(err)
	}
	fmt.Println(f)
	// Output:
	// PartitionKey eq 'it''s' and Age gt 5 and Name ne '{}'
}

func ExampleFilter_Explain() {
	f, _ := filter.Parse("PartitionKey eq 'p' and RowKey gt '2024-01' and RowKey le '2024-12' and Kind eq 'log'")
	fmt.Println(f.Explain())
	// Output:
	// 1 key range:
	//   [KeyAfter('p', '2024-01'), KeyAfter('p', '2024-12'))
	// residual: Kind eq 'log'
}

func ExampleFilter_KeyRanges() {
	f, _ := filter.Parse("PartitionKey eq 'a' or PartitionKey eq 'b'")
	rs, ok := f.KeyRanges()
	fmt.Println(len(rs), ok, rs[0].Contains("a", "x"), rs[1].Contains("a", "x"))
	// Output:
	// 2 true true false
}

func ExampleConst() {
	// "false or …" is how .NET's predicate builders start a disjunction.
	f, _ := filter.Parse("false or PartitionKey eq 'a' or PartitionKey eq 'b'")
	fmt.Println(f.Explain())
	fmt.Println(filter.Or(filter.Const(false), filter.RowKey().Eq("r")))
	fmt.Println(filter.And(filter.PartitionKey().Eq("a"), filter.Const(false)).Explain())
	// Output:
	// 2 key ranges:
	//   [PartitionStart('a'), PartitionEnd('a'))
	//   [PartitionStart('b'), PartitionEnd('b'))
	// residual: false or PartitionKey eq 'a' or PartitionKey eq 'b'
	// false or RowKey eq 'r'
	// no ranges: nothing can match
	// residual: PartitionKey eq 'a' and false
}

func ExampleField_Eq() {
	// A Go integer that fits Int32 is written as an Int32 literal, which
	// compares by value with Int32, Int64 and Double properties, as in the
	// service: Eq(42) finds 42 whatever numeric type it was stored as.
	type Age int
	f := filter.Prop("Age").Eq(Age(42))
	for _, v := range []localtable.Value{localtable.Int32Value(42), localtable.Int64Value(42), localtable.DoubleValue(42)} {
		e := (&localtable.Entity{PartitionKey: "p", RowKey: "r"}).Set("Age", v)
		fmt.Println(f, v.Kind(), f.Match(e))
	}
	// Beyond Int32's range the literal is Int64.
	fmt.Println(filter.Prop("Big").Eq(uint64(5_000_000_000)))
	// Output:
	// Age eq 42 Edm.Int32 true
	// Age eq 42 Edm.Int64 true
	// Age eq 42 Edm.Double true
	// Big eq 5000000000L
}

func ExampleInt64() {
	// An Int64 literal compares with Int64 properties only.
	f := filter.Prop("N").Eq(filter.Int64(42))
	i32 := (&localtable.Entity{}).Set("N", localtable.Int32Value(42))
	i64 := (&localtable.Entity{}).Set("N", localtable.Int64Value(42))
	fmt.Println(f, f.Match(i32), f.Match(i64))
	// Output:
	// N eq 42L false true
}

func ExampleInt32() {
	f, err := filter.Format("N ge {} and M lt {}", filter.Int32(-7), filter.Int64(-7))
	fmt.Println(f, err)
	// Output:
	// N ge -7 and M lt -7L <nil>
}

func ExampleFilter_Err() {
	// Misuse does not panic: the filter carries the error, matches
	// nothing, and a query that uses it fails with the error.
	f := filter.And(
		filter.PartitionKey().Eq("p"),
		filter.Prop("Size").Lt(uint64(1)<<63),
	)
	fmt.Println(f.Err())
	fmt.Println(errors.Is(f.Err(), localtable.ErrInvalidInput), f.Match(&localtable.Entity{PartitionKey: "p"}))

	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(context.Background(), "Files")
	_, err := tbl.Query(context.Background(), &localtable.QueryOptions{Filter: f})
	fmt.Println(err == f.Err())
	// Output:
	// localtable: InvalidInput: filter: Size lt: integer 9223372036854775808 (uint64) is beyond Int64's range and has no literal
	// true false
	// true
}

func ExampleParseWithOptions() {
	// Embedded use may lift the service's limit of 15 comparisons…
	s := "PartitionKey eq 'p0'"
	for i := 1; i < 20; i++ {
		s += fmt.Sprintf(" or PartitionKey eq 'p%d'", i)
	}
	_, err := filter.Parse(s)
	fmt.Println(err)
	f, err := filter.ParseWithOptions(s, nil)
	rs, _ := f.KeyRanges()
	fmt.Println(len(rs), err)
	// …but not MaxLength, which keeps parsing and planning fast.
	_, err = filter.ParseWithOptions(s+strings.Repeat(" ", filter.MaxLength), nil)
	fmt.Println(err)
	// Output:
	// filter: syntax error at offset 378: too many comparisons: at most 15 are allowed
	// 20 <nil>
	// filter: syntax error at offset 1048576: filter too long: 1049062 bytes, at most 1048576 are allowed
}

// And combines conditions that apply only sometimes: of no conditions it
// is the filter "true", which selects every entity, never nil (a query
// refuses a nil *filter.Filter).
func ExampleAnd() {
	ctx := context.Background()
	a, _ := localtable.Open(nil)
	defer a.Close()
	t, _ := a.CreateTable(ctx, "People")
	for i, age := range []int32{17, 30, 45} {
		e := localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}
		e.Set("Age", localtable.Int32Value(age))
		t.Insert(ctx, e)
	}
	search := func(minAge int) {
		var conds []*filter.Filter
		if minAge > 0 {
			conds = append(conds, filter.Prop("Age").Ge(minAge))
		}
		f := filter.And(conds...)
		n, err := t.Count(ctx, f)
		fmt.Printf("%q: %d, %v\n", f, n, err)
	}
	search(0)
	search(18)
	// Output:
	// "true": 3, <nil>
	// "Age ge 18": 2, <nil>
}
