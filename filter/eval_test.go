package filter_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

var allOps = []filter.Op{filter.OpEq, filter.OpNe, filter.OpGt, filter.OpGe, filter.OpLt, filter.OpLe}

func want3(op filter.Op, c int) bool {
	switch op {
	case filter.OpEq:
		return c == 0
	case filter.OpNe:
		return c != 0
	case filter.OpGt:
		return c > 0
	case filter.OpGe:
		return c >= 0
	case filter.OpLt:
		return c < 0
	}
	return c <= 0
}

func entityWith(v localtable.Value) *localtable.Entity {
	e := &localtable.Entity{PartitionKey: "p", RowKey: "r"}
	return e.Set("P", v)
}

// check evaluates "P op lit" against an entity whose P is prop, both through
// a built filter and through the parse of its text.
func check(t *testing.T, prop localtable.Value, op filter.Op, lit localtable.Value, want bool) {
	t.Helper()
	f := filter.Prop("P").Compare(op, lit)
	e := entityWith(prop)
	if got := f.Match(e); got != want {
		t.Errorf("%s with P = %s (%s): got %v, want %v", f, filter.Literal(prop), prop.Kind(), got, want)
	}
	g, err := filter.Parse(f.String())
	if err != nil {
		t.Fatalf("Parse(%q): %v", f, err)
	}
	if got := g.Match(e); got != want {
		t.Errorf("parsed %s with P = %s: got %v, want %v", g, filter.Literal(prop), got, want)
	}
}

// ordered lists, per Edm type, values in strictly increasing service order.
var ordered = map[localtable.Kind][]localtable.Value{
	localtable.KindString: {str(""), str("10"), str("9"), str("A"), str("a"), str("\uD7FF"), str("\U00010000"), str("\uE000"), str("\uFFFF")},
	localtable.KindInt32:  {i32(math.MinInt32), i32(-1), i32(0), i32(9), i32(10), i32(math.MaxInt32)},
	localtable.KindInt64:  {i64(math.MinInt64), i64(-1), i64(9), i64(10), i64(120), i64(math.MaxInt64)},
	localtable.KindDouble: {dbl(math.Inf(-1)), dbl(-1.5), dbl(0), dbl(9), dbl(10), dbl(math.Inf(1))},
	localtable.KindBool:   {boo(false), boo(true)},
	localtable.KindDateTime: {
		localtable.DateTimeTicksValue(0),
		dt("2008-07-10T00:00:00.0010000Z"),
		dt("2008-07-10T00:00:00.0010001Z"), // 100 ns later
		dt("2008-07-10T00:00:00.0010002Z"),
		dt("9999-12-31T23:59:59.9999999Z"),
	},
	localtable.KindGUID: {
		guidV("00000000-0000-0000-0000-000000000000"),
		guidV("0f8fad5b-d9cb-469f-a165-70867728950e"),
		guidV("0f8fad5b-d9cb-469f-a165-70867728950f"),
		guidV("7c9e6679-7425-40de-944b-e07fc1f90ae7"),
		guidV("ffffffff-ffff-ffff-ffff-ffffffffffff"),
	},
	localtable.KindBinary: {
		localtable.BinaryValue(nil), localtable.BinaryValue([]byte{0}), localtable.BinaryValue([]byte{0, 0}),
		localtable.BinaryValue([]byte{1}), localtable.BinaryValue([]byte{0xFF}),
	},
}

// TestEvalMatrix compares every pair of values of every Edm type with every
// operator.
func TestEvalMatrix(t *testing.T) {
	for kind, vals := range ordered {
		t.Run(kind.String(), func(t *testing.T) {
			for i, a := range vals {
				for j, b := range vals {
					for _, op := range allOps {
						c := 0
						if i < j {
							c = -1
						} else if i > j {
							c = 1
						}
						check(t, a, op, b, want3(op, c))
					}
				}
			}
		})
	}
}

// TestEvalTypeMismatch: values of different types never compare, ne
// included, except that an Int32 literal compares by value with Int64 and
// Double properties.
func TestEvalTypeMismatch(t *testing.T) {
	for pk, pvals := range ordered {
		for lk, lvals := range ordered {
			if pk == lk {
				continue
			}
			promoted := lk == localtable.KindInt32 && (pk == localtable.KindInt64 || pk == localtable.KindDouble)
			if promoted {
				continue
			}
			for _, p := range pvals {
				for _, l := range lvals {
					for _, op := range allOps {
						check(t, p, op, l, false)
					}
				}
			}
		}
	}
}

func TestEvalInt32Promotion(t *testing.T) {
	tests := []struct {
		prop localtable.Value
		lit  int32
		c    int
	}{
		{i64(10), 9, 1},
		{i64(9), 10, -1},
		{i64(math.MaxInt64), math.MaxInt32, 1},
		{i64(math.MinInt64), math.MinInt32, -1},
		{i64(-5), -5, 0},
		{dbl(9.5), 9, 1},
		{dbl(9), 9, 0},
		{dbl(-0.5), 0, -1},
		{dbl(math.Inf(1)), math.MaxInt32, 1},
	}
	for _, test := range tests {
		for _, op := range allOps {
			check(t, test.prop, op, i32(test.lit), want3(op, test.c))
		}
	}
	// But not the other way, nor between Int64 and Double.
	for _, op := range allOps {
		check(t, i32(5), op, i64(5), false)
		check(t, i32(5), op, dbl(5), false)
		check(t, i64(5), op, dbl(5), false)
		check(t, dbl(5), op, i64(5), false)
	}
}

func TestEvalNaN(t *testing.T) {
	nan := dbl(math.NaN())
	for _, op := range allOps {
		want := op == filter.OpNe
		check(t, nan, op, nan, want)
		check(t, nan, op, dbl(1), want)
		check(t, dbl(1), op, nan, want)
		check(t, nan, op, i32(1), want)
	}
	// Zeros are equal.
	check(t, dbl(math.Copysign(0, -1)), filter.OpEq, dbl(0), true)
}

// TestEvalMissing: a comparison with an absent property is false for every
// operator, ne included; not inverts that.
func TestEvalMissing(t *testing.T) {
	e := &localtable.Entity{PartitionKey: "p", RowKey: "r"}
	e.Set("Null", localtable.Value{})
	for _, prop := range []string{"Missing", "Null", "Timestamp"} {
		for _, op := range allOps {
			for _, lits := range ordered {
				f := filter.Prop(prop).Compare(op, lits[0])
				if f.Match(e) {
					t.Errorf("%s matched an entity without %s", f, prop)
				}
				if !filter.Not(f).Match(e) {
					t.Errorf("%s did not match an entity without %s", filter.Not(f), prop)
				}
			}
		}
	}
}

func TestEvalSystemProperties(t *testing.T) {
	ts := time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC)
	e := &localtable.Entity{PartitionKey: "p1", RowKey: "r1", Timestamp: ts}
	tests := []struct {
		f    string
		want bool
	}{
		{"PartitionKey eq 'p1'", true},
		{"PartitionKey eq 1", false},
		{"PartitionKey ne 1", false},
		{"RowKey gt 'r0' and RowKey lt 'r2'", true},
		{"Timestamp eq datetime'2024-01-02T03:04:05.0000006Z'", true},
		{"Timestamp eq datetime'2024-01-02T03:04:05.0000005Z'", false},
		{"Timestamp gt datetime'2024-01-02T03:04:05Z'", true},
		{"not (PartitionKey eq 'p1') or RowKey eq 'r1'", true},
		{"not (PartitionKey eq 'p1' or RowKey eq 'r1')", false},
	}
	for _, test := range tests {
		f, err := filter.Parse(test.f)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Match(e); got != test.want {
			t.Errorf("%s: got %v, want %v", test.f, got, test.want)
		}
	}
}

// TestEvalAzuriteBugs covers comparisons the Azurite emulator gets wrong.
func TestEvalAzuriteBugs(t *testing.T) {
	match := func(f string, v localtable.Value) bool {
		g, err := filter.Parse(f)
		if err != nil {
			t.Fatal(err)
		}
		return g.Match(entityWith(v))
	}
	// Int64 compared as strings: "120" < "13".
	if match("P ge 12L and P lt 13L", i64(120)) {
		t.Error("Int64 120 in [12, 13)")
	}
	if !match("P lt 10L", i64(9)) {
		t.Error("Int64 9 not < 10")
	}
	// DateTime truncated to milliseconds.
	if match("P eq datetime'2008-07-10T00:00:00.0010001Z'", dt("2008-07-10T00:00:00.001Z")) {
		t.Error("datetimes 100 ns apart are equal")
	}
	if !match("P gt datetime'2008-07-10T00:00:00.001Z'", dt("2008-07-10T00:00:00.0010001Z")) {
		t.Error("datetime 100 ns later is not greater")
	}
	// Guid ne and gt.
	g := "0f8fad5b-d9cb-469f-a165-70867728950e"
	if !match("P ne guid'7c9e6679-7425-40de-944b-e07fc1f90ae7'", guidV(g)) {
		t.Error("guid ne")
	}
	if match("P ne guid'"+g+"'", guidV(g)) {
		t.Error("guid ne itself")
	}
	if !match("P gt guid'00000000-0000-0000-0000-000000000001'", guidV(g)) {
		t.Error("guid gt")
	}
	// UTF-16 order: U+10000 (a surrogate pair) sorts before U+E000.
	if !match("P lt '\uE000'", str("\U00010000")) {
		t.Error("U+10000 not < U+E000")
	}
	if match("P gt '\uE000'", str("\U00010000")) {
		t.Error("U+10000 > U+E000")
	}
}

func TestNilFilter(t *testing.T) {
	var f *filter.Filter
	if !f.Match(&localtable.Entity{}) {
		t.Error("nil filter does not match")
	}
	if r, ok := f.KeyRanges(); ok || r != nil {
		t.Error("nil filter has ranges")
	}
	if f.String() != "" || f.Expr() != nil {
		t.Error("nil filter prints")
	}
	_ = fmt.Sprint(f.Explain())
}

// TestEvalConstants: true holds for every entity and false for none,
// whatever the entity holds, under not, and, or and comparisons of a
// Boolean literal with a property.
func TestEvalConstants(t *testing.T) {
	ents := []*localtable.Entity{
		{PartitionKey: "p", RowKey: "r"},
		entityWith(boo(true)),
		entityWith(boo(false)),
		entityWith(str("true")),
	}
	tests := []struct {
		f    string
		want []bool // per entity
	}{
		{"true", []bool{true, true, true, true}},
		{"false", []bool{false, false, false, false}},
		{"not false", []bool{true, true, true, true}},
		{"not true", []bool{false, false, false, false}},
		{"(true)", []bool{true, true, true, true}},
		{"true and P", []bool{false, true, false, false}},
		{"false or P", []bool{false, true, false, false}},
		{"false and P or true", []bool{true, true, true, true}},
		{"true eq P", []bool{false, true, false, false}},
		{"false eq P", []bool{false, false, true, false}},
		{"true ne P", []bool{false, false, true, false}},
		{"not (true eq P)", []bool{true, false, true, true}},
		{"true gt P", []bool{false, false, true, false}},
		{"PartitionKey eq 'p' and not false", []bool{true, true, true, true}},
	}
	for _, test := range tests {
		f, err := filter.Parse(test.f)
		if err != nil {
			t.Fatalf("Parse(%q): %v", test.f, err)
		}
		for i, e := range ents {
			if got := f.Match(e); got != test.want[i] {
				t.Errorf("%s on entity %d (%v): got %v, want %v", test.f, i, e.Properties, got, test.want[i])
			}
		}
	}
}
