package filter_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

func TestBuilder(t *testing.T) {
	g := localtable.MustParseGUID("0f8fad5b-d9cb-469f-a165-70867728950e")
	tests := []struct {
		f    *filter.Filter
		want string
	}{
		{filter.Prop("S").Eq("it's"), "S eq 'it''s'"},
		{filter.Prop("I").Ne(int32(-3)), "I ne -3"},
		{filter.Prop("L").Gt(7), "L gt 7"},
		{filter.Prop("L").Gt(int64(7)), "L gt 7"},
		{filter.Prop("L").Gt(filter.Int64(7)), "L gt 7L"},
		{filter.Prop("L").Gt(filter.Int32(-7)), "L gt -7"},
		{filter.Prop("L").Eq(math.MaxInt32), "L eq 2147483647"},
		{filter.Prop("L").Eq(math.MinInt32), "L eq -2147483648"},
		{filter.Prop("L").Eq(math.MaxInt32 + 1), "L eq 2147483648L"},
		{filter.Prop("L").Eq(math.MinInt32 - 1), "L eq -2147483649L"},
		{filter.Prop("L").Eq(math.MinInt64), "L eq -9223372036854775808L"},
		{filter.Prop("U").Eq(uint8(255)), "U eq 255"},
		{filter.Prop("U").Eq(uint32(math.MaxUint32)), "U eq 4294967295L"},
		{filter.Prop("U").Eq(uint64(math.MaxInt64)), "U eq 9223372036854775807L"},
		{filter.Prop("U").Eq(uintptr(3)), "U eq 3"},
		{filter.Prop("N").Eq(age(42)), "N eq 42"},
		{filter.Prop("N").Eq(name("it's")), "N eq 'it''s'"},
		{filter.Prop("N").Eq(flag(true)), "N eq true"},
		{filter.Prop("N").Eq(blob{0xab}), "N eq X'AB'"},
		{filter.Prop("N").Eq(score(0.5)), "N eq 0.5"},
		{filter.Prop("F").Eq(float32(1.5)), "F eq 1.5"},
		{filter.Prop("F").Eq(math.NaN()), "F eq NaN"},
		{filter.Prop("F").Eq(math.Inf(-1)), "F eq -INF"},
		{filter.Prop("F").Eq(math.Copysign(0, -1)), "F eq -0.0"},
		{filter.Prop("D").Ge(2.0), "D ge 2.0"},
		{filter.Prop("B").Lt(false), "B lt false"},
		{filter.Prop("T").Le(time.Date(2008, 7, 10, 0, 0, 0, 1234567800, time.UTC)), "T le datetime'2008-07-10T00:00:01.2345678Z'"},
		{filter.Prop("G").Eq(g), "G eq guid'0f8fad5b-d9cb-469f-a165-70867728950e'"},
		{filter.Prop("X").Eq([]byte{0xab, 1}), "X eq X'AB01'"},
		{filter.And(nil, filter.RowKey().Eq("r"), nil), "RowKey eq 'r'"},
		{filter.And(), "true"},
		{filter.Or(nil, filter.RowKey().Eq("r")), "true"},
		{filter.And(filter.Prop("A").Eq(1), filter.And(filter.Prop("B").Eq(2), filter.Prop("C").Eq(3))), "A eq 1 and (B eq 2 and C eq 3)"},
		{filter.And(filter.Or(filter.Prop("A").Eq(1), filter.Prop("B").Eq(2)), filter.Prop("C").Eq(3)), "(A eq 1 or B eq 2) and C eq 3"},
		{filter.Not(filter.Not(filter.Prop("A").Eq(true))), "not not (A eq true)"},
		{filter.Const(true), "true"},
		{filter.Const(false), "false"},
		{filter.Or(), "false"},
		{filter.Not(nil), "false"},
		{filter.Not(filter.Const(true)), "not true"},
		{filter.Or(filter.Const(false), filter.RowKey().Eq("r")), "false or RowKey eq 'r'"},
		{filter.And(filter.Const(true), filter.Or(filter.Const(false), filter.Prop("A").Eq(int32(1)))), "true and (false or A eq 1)"},
	}
	for _, test := range tests {
		if got := test.f.String(); got != test.want {
			t.Errorf("got %q, want %q", got, test.want)
		}
		p, err := filter.Parse(test.f.String())
		if err != nil || !filter.Equal(p.Expr(), test.f.Expr()) {
			t.Errorf("round trip %q: %v", test.want, err)
		}
	}
	// No builder returns nil: And of nothing (or of nils) is true, Or
	// with a nil (true) argument is true.
	for _, f := range []*filter.Filter{filter.And(), filter.And(nil), filter.And(nil, nil), filter.Or(filter.Prop("A").Eq(1), nil), filter.Or(nil)} {
		if f == nil || f.String() != "true" || f.Err() != nil {
			t.Errorf("got %v, want the Filter \"true\"", f)
			continue
		}
		if p, err := filter.Parse(f.String()); err != nil || !filter.Equal(p.Expr(), filter.Const(true).Expr()) {
			t.Errorf("%s does not parse back to true: %v", f, err)
		}
	}
	// Or of nothing and the negation of everything match nothing and plan
	// no ranges.
	e := (&localtable.Entity{PartitionKey: "p", RowKey: "r"}).Set("A", localtable.Int32Value(1))
	for _, f := range []*filter.Filter{filter.Or(), filter.Not(nil), filter.Const(false)} {
		if rs, ok := f.KeyRanges(); f.Match(e) || !ok || len(rs) != 0 {
			t.Errorf("%s: Match %v, ranges %v %v", f, f.Match(e), rs, ok)
		}
	}
	if f := filter.Const(true); !f.Match(e) {
		t.Errorf("%s does not match", f)
	}
}

// Named types, which the builder converts by their kind.
type (
	age   int
	name  string
	flag  bool
	blob  []byte
	score float32
)

// TestBuilderIntegers: a Go integer that fits Int32 is an Int32 literal,
// which the service (and Match) compares by value with Int32, Int64 and
// Double properties, so the obvious Eq(42) finds 42 whatever the
// property's numeric type; Int64(42) and values beyond Int32 compare with
// Int64 properties only.
func TestBuilderIntegers(t *testing.T) {
	ent := func(v localtable.Value) *localtable.Entity {
		return (&localtable.Entity{PartitionKey: "p", RowKey: "r"}).Set("N", v)
	}
	i32, i64, dbl := ent(localtable.Int32Value(42)), ent(localtable.Int64Value(42)), ent(localtable.DoubleValue(42))
	big := ent(localtable.Int64Value(5_000_000_000))
	tests := []struct {
		f                  *filter.Filter
		i32, i64, dbl, big bool
	}{
		{filter.Prop("N").Eq(42), true, true, true, false},
		{filter.Prop("N").Eq(int64(42)), true, true, true, false},
		{filter.Prop("N").Eq(uint16(42)), true, true, true, false},
		{filter.Prop("N").Eq(age(42)), true, true, true, false},
		{filter.Prop("N").Eq(filter.Int32(42)), true, true, true, false},
		{filter.Prop("N").Eq(filter.Int64(42)), false, true, false, false},
		{filter.Prop("N").Eq(42.0), false, false, true, false},
		{filter.Prop("N").Eq(5_000_000_000), false, false, false, true},
		{filter.Prop("N").Gt(41), true, true, true, true},
		{filter.Prop("N").Lt(uint64(5_000_000_001)), false, true, false, true},
	}
	for _, test := range tests {
		if err := test.f.Err(); err != nil {
			t.Fatal(err)
		}
		got := [4]bool{test.f.Match(i32), test.f.Match(i64), test.f.Match(dbl), test.f.Match(big)}
		if want := [4]bool{test.i32, test.i64, test.dbl, test.big}; got != want {
			t.Errorf("%s: matches Int32, Int64, Double 42 and Int64 5e9: %v, want %v", test.f, got, want)
		}
		// The service reads the String the same way.
		p, err := filter.Parse(test.f.String())
		if err != nil || !filter.Equal(p.Expr(), test.f.Expr()) {
			t.Errorf("%s: round trip %v", test.f, err)
		}
	}
}

// TestBuilderErrors: misuse never panics; the Filter carries an
// InvalidInput error, matches nothing, plans nothing, prints what does not
// parse, and passes the error on through And, Or and Not.
func TestBuilderErrors(t *testing.T) {
	x := 1
	ok := filter.Prop("A").Eq(1)
	for name, f := range map[string]*filter.Filter{
		"keyword":        filter.Prop("and").Eq(1),
		"empty":          filter.Prop("").Eq(1),
		"digit first":    filter.Prop("1a").Eq(1),
		"dash":           filter.Prop("a-b").Eq(1),
		"space":          filter.Prop("a or true").Eq(1),
		"zero Field":     filter.Field{}.Eq(1),
		"unknown op":     filter.Prop("A").Compare(filter.Op(6), 1),
		"nil value":      filter.Prop("A").Eq(nil),
		"null Value":     filter.Prop("A").Eq(localtable.Value{}),
		"struct":         filter.Prop("A").Eq(struct{}{}),
		"pointer":        filter.Prop("A").Eq(&x),
		"slice of int":   filter.Prop("A").Eq([]int{1}),
		"complex":        filter.Prop("A").Eq(1i),
		"uint64 max":     filter.Prop("A").Eq(uint64(math.MaxUint64)),
		"uint64 2^63":    filter.Prop("A").Eq(uint64(1) << 63),
		"year 0":         filter.Prop("A").Eq(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)),
		"year 10000":     filter.Prop("A").Eq(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)),
		"ticks":          filter.Prop("A").Eq(localtable.DateTimeTicksValue(-1)),
		"bad UTF-8":      filter.Prop("A").Eq("a\xffb"),
		"bad UTF-8 name": filter.Prop("A").Eq(name("\xff")),
		"and":            filter.And(ok, filter.Prop("-").Eq(1), nil),
		"or":             filter.Or(nil, ok, filter.Prop("A").Eq(nil)),
		"not":            filter.Not(filter.Prop("A").Eq(nil)),
		"New nil":        filter.New(nil),
		"New nil node":   filter.New(&filter.AndExpr{Left: ok.Expr()}),
		"New nil cmp":    filter.New(&filter.OrExpr{Left: ok.Expr(), Right: (*filter.Comparison)(nil)}),
		"New bad name":   filter.New(&filter.NotExpr{X: &filter.Comparison{Property: "not", Value: localtable.Int32Value(1)}}),
		"New null":       filter.New(&filter.Comparison{Property: "A"}),
		"New op":         filter.New(&filter.Comparison{Property: "A", Op: 99, Value: localtable.Int32Value(1)}),
	} {
		err := f.Err()
		if err == nil {
			t.Errorf("%s: no error: %s", name, f)
			continue
		}
		if !errors.Is(err, localtable.ErrInvalidInput) || !strings.Contains(err.Error(), "filter: ") {
			t.Errorf("%s: error %v", name, err)
		}
		e := (&localtable.Entity{PartitionKey: "p", RowKey: "r"}).Set("A", localtable.Int32Value(1))
		if rs, bounded := f.KeyRanges(); f.Match(e) || !bounded || len(rs) != 0 || f.Expr() != nil {
			t.Errorf("%s: Match %v, ranges %v %v", name, f.Match(e), rs, bounded)
		}
		if _, perr := filter.ParseWithOptions(f.String(), nil); perr == nil {
			t.Errorf("%s: String %q parses", name, f)
		}
		if got := f.Explain(); got != "invalid filter: "+err.Error() {
			t.Errorf("%s: Explain %q", name, got)
		}
		for _, g := range []*filter.Filter{filter.And(ok, f), filter.Or(f, nil), filter.Not(f), filter.Or(filter.Not(f), ok)} {
			if g.Err() != err {
				t.Errorf("%s: combined: %v", name, g.Err())
			}
		}
	}
	if err := ok.Err(); err != nil {
		t.Error(err)
	}
	for _, f := range []*filter.Filter{nil, filter.New(ok.Expr()), filter.Const(true), filter.And(), filter.Or()} {
		if err := f.Err(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestFormat(t *testing.T) {
	f, err := filter.Format("PartitionKey eq {} and (A eq {} or T lt {})", "o'k", filter.Int64(1), time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if want := "PartitionKey eq 'o''k' and (A eq 1L or T lt datetime'2020-01-01T00:00:00Z')"; f.String() != want {
		t.Errorf("got %s", f)
	}
	// Integers take the builder's rule: Int32 when they fit.
	if f, err := filter.Format("A eq {} and B eq {} and C eq {}", 42, age(-7), uint64(1)<<40); err != nil || f.String() != "A eq 42 and B eq -7 and C eq 1099511627776L" {
		t.Errorf("got %s, %v", f, err)
	}
	for _, test := range []struct {
		format string
		args   []any
		msg    string
	}{
		{"A eq {}", nil, "more placeholders"},
		{"A eq {} and B eq {}", []any{1}, "more placeholders than the 1 arguments"},
		{"A eq {} and", []any{1}, "syntax error"},
		{"A eq {}", []any{1, 2}, "1 placeholders but 2 arguments"},
		{"A eq {}", []any{struct{}{}}, "argument 0"},
		{"A eq {}", []any{nil}, "non-null"},
		{"A eq {}", []any{uint64(math.MaxUint64)}, "beyond Int64"},
		{"A eq {} {}", []any{1, 2}, "syntax error"},
		{"A eq '{}'", []any{1}, "0 placeholders but 1 arguments"},
	} {
		f, err := filter.Format(test.format, test.args...)
		if err == nil || !strings.Contains(err.Error(), test.msg) {
			t.Errorf("Format(%q, %v) = %v, want %q", test.format, test.args, err, test.msg)
		}
		// The error is InvalidInput, and the Filter returned with it is
		// not nil but carries it, as Parse's does.
		if !errors.Is(err, localtable.ErrInvalidInput) {
			t.Errorf("Format(%q, %v): %v does not wrap ErrInvalidInput", test.format, test.args, err)
		}
		if f == nil || f.Err() != err {
			t.Errorf("Format(%q, %v) returned the Filter %#v, want one carrying %v", test.format, test.args, f, err)
		}
	}
}
