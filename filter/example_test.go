package filter_test

import (
	"errors"
	"fmt"

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
		filter.Or(filter.Prop("Age").Gt(localtable.Int32Value(30)), filter.Prop("Big").Lt(int64(5))),
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
	// residual: PartitionKey eq 'p' and RowKey gt '2024-01' and RowKey le '2024-12' and Kind eq 'log'
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
