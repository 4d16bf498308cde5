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

func cmpx(prop string, op filter.Op, v localtable.Value) filter.Expr {
	return &filter.Comparison{Property: prop, Op: op, Value: v}
}
func and(l, r filter.Expr) filter.Expr { return &filter.AndExpr{Left: l, Right: r} }
func or(l, r filter.Expr) filter.Expr  { return &filter.OrExpr{Left: l, Right: r} }
func not(x filter.Expr) filter.Expr    { return &filter.NotExpr{X: x} }

var (
	tru filter.Expr = &filter.Constant{Value: true}
	fls filter.Expr = &filter.Constant{Value: false}
)

var (
	str   = localtable.StringValue
	i32   = localtable.Int32Value
	i64   = localtable.Int64Value
	dbl   = localtable.DoubleValue
	boo   = localtable.BoolValue
	guidV = func(s string) localtable.Value { return localtable.GUIDValue(localtable.MustParseGUID(s)) }
	dt    = func(s string) localtable.Value {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return localtable.DateTimeValue(t)
	}
)

func TestParse(t *testing.T) {
	a1 := cmpx("A", filter.OpEq, i32(1))
	b2 := cmpx("B", filter.OpEq, i32(2))
	c3 := cmpx("C", filter.OpEq, i32(3))
	tests := []struct {
		in   string
		want filter.Expr
		str  string // canonical form; "" means in
	}{
		{"A eq 1", a1, ""},
		{"Name eq 'it''s'", cmpx("Name", filter.OpEq, str("it's")), ""},
		{"Name eq ''", cmpx("Name", filter.OpEq, str("")), ""},
		{"N eq 2147483647", cmpx("N", filter.OpEq, i32(math.MaxInt32)), ""},
		{"N eq -2147483648", cmpx("N", filter.OpEq, i32(math.MinInt32)), ""},
		{"N eq 42L", cmpx("N", filter.OpEq, i64(42)), ""},
		{"N eq 42l", cmpx("N", filter.OpEq, i64(42)), "N eq 42L"},
		{"N eq -9223372036854775808L", cmpx("N", filter.OpEq, i64(math.MinInt64)), ""},
		{"N eq -5", cmpx("N", filter.OpEq, i32(-5)), ""},
		{"N eq 007", cmpx("N", filter.OpEq, i32(7)), "N eq 7"},
		{"D eq 1.5", cmpx("D", filter.OpEq, dbl(1.5)), ""},
		{"D eq 1e3", cmpx("D", filter.OpEq, dbl(1000)), "D eq 1000.0"},
		{"D eq 1.5E-3", cmpx("D", filter.OpEq, dbl(0.0015)), "D eq 0.0015"},
		{"D eq 1.5d", cmpx("D", filter.OpEq, dbl(1.5)), "D eq 1.5"},
		{"D eq 2D", cmpx("D", filter.OpEq, dbl(2)), "D eq 2.0"},
		{"D eq 1e21", cmpx("D", filter.OpEq, dbl(1e21)), "D eq 1e+21"},
		{"D eq -0.0", cmpx("D", filter.OpEq, dbl(math.Copysign(0, -1))), ""},
		{"D eq INF", cmpx("D", filter.OpEq, dbl(math.Inf(1))), ""},
		{"D eq -INF", cmpx("D", filter.OpEq, dbl(math.Inf(-1))), ""},
		{"D eq NaN", cmpx("D", filter.OpEq, dbl(math.NaN())), ""},
		{"B eq true", cmpx("B", filter.OpEq, boo(true)), ""},
		{"B ne false", cmpx("B", filter.OpNe, boo(false)), ""},
		{"T eq datetime'2008-07-10T00:00:00Z'", cmpx("T", filter.OpEq, dt("2008-07-10T00:00:00Z")), ""},
		{"T eq datetime'2008-07-10T00:00:00.1234567Z'", cmpx("T", filter.OpEq, dt("2008-07-10T00:00:00.1234567Z")), ""},
		{"T eq datetime'2008-07-10T00:00:00.1000000Z'", cmpx("T", filter.OpEq, dt("2008-07-10T00:00:00.1Z")), "T eq datetime'2008-07-10T00:00:00.1Z'"},
		{"T eq datetime'2008-07-10T00:00Z'", cmpx("T", filter.OpEq, dt("2008-07-10T00:00:00Z")), "T eq datetime'2008-07-10T00:00:00Z'"},
		{"T eq datetime'2008-07-10T00:00:00'", cmpx("T", filter.OpEq, dt("2008-07-10T00:00:00Z")), "T eq datetime'2008-07-10T00:00:00Z'"},
		{"T eq datetime'2008-07-10T02:00:00+02:00'", cmpx("T", filter.OpEq, dt("2008-07-10T00:00:00Z")), "T eq datetime'2008-07-10T00:00:00Z'"},
		{"T eq DateTime'0001-01-01T00:00:00Z'", cmpx("T", filter.OpEq, localtable.DateTimeTicksValue(0)), "T eq datetime'0001-01-01T00:00:00Z'"},
		{"G eq guid'0F8FAD5B-D9CB-469F-A165-70867728950E'", cmpx("G", filter.OpEq, guidV("0f8fad5b-d9cb-469f-a165-70867728950e")), "G eq guid'0f8fad5b-d9cb-469f-a165-70867728950e'"},
		{"X eq X'0a0B'", cmpx("X", filter.OpEq, localtable.BinaryValue([]byte{10, 11})), "X eq X'0A0B'"},
		{"X eq binary'FF'", cmpx("X", filter.OpEq, localtable.BinaryValue([]byte{255})), "X eq X'FF'"},
		{"X eq X''", cmpx("X", filter.OpEq, localtable.BinaryValue(nil)), ""},

		// Normalization of a literal on the left.
		{"5 lt Age", cmpx("Age", filter.OpGt, i32(5)), "Age gt 5"},
		{"5 le Age", cmpx("Age", filter.OpGe, i32(5)), "Age ge 5"},
		{"'x' eq PartitionKey", cmpx("PartitionKey", filter.OpEq, str("x")), "PartitionKey eq 'x'"},
		// A bare Boolean property.
		{"IsActive", cmpx("IsActive", filter.OpEq, boo(true)), "IsActive eq true"},
		{"not IsActive", not(cmpx("IsActive", filter.OpEq, boo(true))), "not (IsActive eq true)"},
		{"not not (A eq 1)", not(not(a1)), ""},

		// Boolean literals as conditions.
		{"true", tru, ""},
		{"false", fls, ""},
		{"(true)", tru, "true"},
		{"((false))", fls, "false"},
		{"not false", not(fls), ""},
		{"not (true)", not(tru), "not true"},
		{"not not true", not(not(tru)), ""},
		{"true and PartitionKey eq 'a'", and(tru, cmpx("PartitionKey", filter.OpEq, str("a"))), ""},
		{"false or A eq 1", or(fls, a1), ""},
		{"A eq 1 and true", and(a1, tru), ""},
		{"A eq 1 and (false or B eq 2)", and(a1, or(fls, b2)), ""},
		{"(true and RowKey eq '1') and ((false or PartitionKey eq 'p1') or PartitionKey eq 'p2') or PartitionKey eq 'p3'",
			or(and(and(tru, cmpx("RowKey", filter.OpEq, str("1"))), or(or(fls, cmpx("PartitionKey", filter.OpEq, str("p1"))), cmpx("PartitionKey", filter.OpEq, str("p2")))), cmpx("PartitionKey", filter.OpEq, str("p3"))),
			"true and RowKey eq '1' and (false or PartitionKey eq 'p1' or PartitionKey eq 'p2') or PartitionKey eq 'p3'"},
		{"not false and IsActive", and(not(fls), cmpx("IsActive", filter.OpEq, boo(true))), "not false and IsActive eq true"},
		// A Boolean literal compared with a property is a comparison.
		{"true eq IsActive", cmpx("IsActive", filter.OpEq, boo(true)), "IsActive eq true"},
		{"false ne IsActive", cmpx("IsActive", filter.OpNe, boo(false)), "IsActive ne false"},
		{"false lt B", cmpx("B", filter.OpGt, boo(false)), "B gt false"},

		// Precedence and associativity.
		{"A eq 1 and B eq 2 and C eq 3", and(and(a1, b2), c3), ""},
		{"A eq 1 and (B eq 2 and C eq 3)", and(a1, and(b2, c3)), ""},
		{"A eq 1 or B eq 2 and C eq 3", or(a1, and(b2, c3)), ""},
		{"(A eq 1 or B eq 2) and C eq 3", and(or(a1, b2), c3), ""},
		{"A eq 1 or (B eq 2 or C eq 3)", or(a1, or(b2, c3)), ""},
		{"(A eq 1) and ((B eq 2))", and(a1, b2), "A eq 1 and B eq 2"},
		{"not (A eq 1) and B eq 2", and(not(a1), b2), ""},
		{"not (A eq 1 and B eq 2)", not(and(a1, b2)), ""},
		{" \tA  eq\n1 ", a1, "A eq 1"},
	}
	for _, test := range tests {
		f, err := filter.Parse(test.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", test.in, err)
			continue
		}
		if !filter.Equal(f.Expr(), test.want) {
			t.Errorf("Parse(%q) = %s, want %s", test.in, f, test.want)
		}
		want := test.str
		if want == "" {
			want = test.in
		}
		if f.String() != want {
			t.Errorf("Parse(%q).String() = %q, want %q", test.in, f.String(), want)
		}
		g, err := filter.Parse(f.String())
		if err != nil || !filter.Equal(g.Expr(), f.Expr()) {
			t.Errorf("round trip of %q: %v, %v", test.in, g, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string // substring of the message
	}{
		{"", 0, "empty filter"},
		{"   ", 3, "empty filter"},
		{"A", -1, ""}, // valid: bare Boolean; placeholder to keep the table honest
		{"A eq", 4, "expected a property, a literal, 'not' or '(', found end of filter"},
		{"A eq 1 B", 7, `expected 'and', 'or' or end of filter, found "B"`},
		{"A eq 1 and", 10, "found end of filter"},
		{"(A eq 1", 7, "expected ')' or a logical operator, found end of filter"},
		{"A eq 1)", 6, `expected 'and', 'or' or end of filter, found ")"`},
		{"A eq B", 5, "expected a literal after eq"},
		{"1 eq 2", 0, "expected a property name"},
		{"A eq (1)", 7, `expected comparison operator after literal, found ")"`},
		{"A eq (B eq 1)", 5, "operand of eq must be a property or a literal"},
		{"not A eq 1", 0, "operand of eq must be a property or a literal"},
		{"not 5", 4, "operand of not must be a Boolean expression, not a literal of type Edm.Int32"},
		{"not 'true'", 4, "operand of not must be a Boolean expression"},
		{"true eq false", 0, "expected a property name"},
		{"true eq (A eq 1)", 8, "operand of eq must be a property or a literal"},
		{"A eq (true)", 5, "operand of eq must be a property or a literal"},
		{"not true eq A", 0, "operand of eq must be a property or a literal"},
		{"true false", 5, `expected 'and', 'or' or end of filter, found "false"`},
		{"True", -1, ""}, // valid: a bare property named True
		{"TRUE eq A", 8, "expected a literal after eq"},
		{"'a'", 3, "expected comparison operator after literal, found end of filter"},
		{"1.5 or true", 4, `expected comparison operator after literal, found "or"`},
		{"5", 1, "expected comparison operator after literal, found end of filter"},
		{"A EQ 1", 2, `expected 'and', 'or' or end of filter, found "EQ"`},
		{"A eq True", 5, "expected a literal after eq"},
		{"A eq 2147483648", 5, "Edm.Int32 literal 2147483648: out of range"},
		{"A eq 9223372036854775808L", 5, "Int64 literal 9223372036854775808L out of range"},
		{"A eq 1e999", 5, "Double literal 1e999 out of range"},
		{"A eq 'x", 5, "unterminated string literal"},
		{"A eq datetime'2008-07-10T00:00:00.12345678Z'", 5, "more than 7 fractional digits"},
		{"A eq datetime'2008-02-30T00:00:00Z'", 5, "day out of range"},
		{"A eq datetime'2008-07-10 00:00:00Z'", 5, "invalid datetime literal"},
		{"A eq datetime'0000-12-31T00:00:00Z'", 5, "field out of range"},
		{"A eq datetime'0001-01-01T00:00:00+01:00'", 5, "out of range"},
		{"A eq guid'{0f8fad5b-d9cb-469f-a165-70867728950e}'", 5, "invalid guid literal"},
		{"A eq guid'0f8fad5b-d9cb-469f-a165-70867728950z'", 5, "invalid guid literal"},
		{"A eq X'0A0'", 5, "odd number of hex digits"},
		{"A eq X'GG'", 5, "not hexadecimal"},
		{"A eq 'a\xff'", 7, "invalid UTF-8"},
		{"A eq 1 and and", 11, "found \"and\""},
		{"A eq 1 or", 9, "found end of filter"},
		{"A gt 1 gt 2", 7, `found "gt"`},
	}
	for _, test := range tests {
		_, err := filter.Parse(test.in)
		if test.offset < 0 {
			if err != nil {
				t.Errorf("Parse(%q): %v", test.in, err)
			}
			continue
		}
		var se *filter.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) error = %v, want *SyntaxError", test.in, err)
			continue
		}
		if se.Offset != test.offset || !strings.Contains(se.Msg, test.msg) {
			t.Errorf("Parse(%q) = offset %d %q, want offset %d %q", test.in, se.Offset, se.Msg, test.offset, test.msg)
		}
		if !errors.Is(err, localtable.ErrInvalidInput) {
			t.Errorf("Parse(%q): error is not ErrInvalidInput", test.in)
		}
		if localtable.ErrorCodeOf(err) != localtable.CodeInvalidInput {
			t.Errorf("Parse(%q): code %q", test.in, localtable.ErrorCodeOf(err))
		}
	}
}

func TestComparisonLimit(t *testing.T) {
	clause := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = "A eq 1"
		}
		return strings.Join(parts, " and ")
	}
	if _, err := filter.Parse(clause(15)); err != nil {
		t.Fatalf("15 comparisons: %v", err)
	}
	_, err := filter.Parse(clause(16))
	var se *filter.SyntaxError
	if !errors.As(err, &se) || se.Offset != len(clause(15))+7 || !strings.Contains(se.Msg, "at most 15") {
		t.Fatalf("16 comparisons: %v", err)
	}
	// Bare Boolean properties count too.
	if _, err := filter.Parse(clause(15) + " and B"); err == nil {
		t.Fatal("16 comparisons with a bare Boolean: no error")
	}
	// Boolean literals compare nothing and do not count, nor does a literal
	// compared with a property count twice.
	if _, err := filter.Parse(clause(15) + " and true or false and not (false)"); err != nil {
		t.Fatalf("15 comparisons and three literals: %v", err)
	}
	if _, err := filter.Parse(clause(14) + " and true eq IsActive"); err != nil {
		t.Fatalf("15 comparisons, one of them true eq IsActive: %v", err)
	}
	if _, err := filter.Parse(clause(15) + " and true eq IsActive"); err == nil {
		t.Fatal("16 comparisons, one of them true eq IsActive: no error")
	}
	for _, opts := range []filter.Options{{}, {MaxComparisons: -1}, {MaxComparisons: 1000}} {
		if _, err := filter.ParseWithOptions(clause(500), &opts); err != nil {
			t.Errorf("%+v: %v", opts, err)
		}
	}
	if _, err := filter.ParseWithOptions(clause(3), &filter.Options{MaxComparisons: 2}); err == nil {
		t.Error("MaxComparisons 2: no error for 3")
	}
}

func TestDepthLimit(t *testing.T) {
	nest := func(n int) string {
		return strings.Repeat("(", n) + "A eq 1" + strings.Repeat(")", n)
	}
	if _, err := filter.Parse(nest(filter.MaxDepth)); err != nil {
		t.Fatalf("depth %d: %v", filter.MaxDepth, err)
	}
	var se *filter.SyntaxError
	_, err := filter.Parse(nest(filter.MaxDepth + 1))
	if !errors.As(err, &se) || se.Offset != filter.MaxDepth || !strings.Contains(se.Msg, "nested too deeply") {
		t.Fatalf("depth %d: %v", filter.MaxDepth+1, err)
	}
	// Deep input fails fast rather than overflowing the stack.
	// (within MaxLength, so that the depth limit is what refuses them).
	if _, err := filter.Parse(nest(500_000)); !errors.As(err, &se) || !strings.Contains(se.Msg, "nested too deeply") {
		t.Fatalf("depth 5e5: %v", err)
	}
	if _, err := filter.Parse(strings.Repeat("not ", 250_000) + "A"); !errors.As(err, &se) || !strings.Contains(se.Msg, "nested too deeply") {
		t.Fatalf("2.5e5 nots: %v", err)
	}
	// "not (…)" counts once, so printing a bare Boolean as "not (A eq true)"
	// stays within the limit.
	f, err := filter.Parse(strings.Repeat("not ", filter.MaxDepth) + "A")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := filter.Parse(f.String()); err != nil {
		t.Fatalf("reparse of deep nots: %v", err)
	}
	// A negated constant prints without parentheses, at the same depth.
	if f, err = filter.Parse(strings.Repeat("not ", filter.MaxDepth) + "true"); err != nil {
		t.Fatal(err)
	}
	if g, err := filter.Parse(f.String()); err != nil || !filter.Equal(g.Expr(), f.Expr()) {
		t.Fatalf("reparse of deep nots of true: %v", err)
	}
	if _, err := filter.Parse(strings.Repeat("not ", filter.MaxDepth+1) + "true"); err == nil {
		t.Fatal("too deep nots of true: no error")
	}
}

// TestLengthLimit: MaxLength is a hard cap, whatever the Options: a longer
// filter is refused before it is read, with a *SyntaxError at the offset
// where the filter became too long, an InvalidInput error.
func TestLengthLimit(t *testing.T) {
	long := "A eq '" + strings.Repeat("x", filter.MaxLength-8) + "'"
	if len(long) != filter.MaxLength-1 {
		t.Fatal(len(long))
	}
	for _, s := range []string{long, long + " "} {
		if _, err := filter.ParseWithOptions(s, nil); err != nil {
			t.Errorf("%d bytes: %v", len(s), err)
		}
	}
	for _, s := range []string{long + "  ", strings.Repeat("A eq 1 or ", filter.MaxLength/10+1) + "A eq 1", "\xff  " + long} {
		for _, opts := range []filter.Options{{}, {MaxComparisons: 15}} {
			_, err := filter.ParseWithOptions(s, &opts)
			var se *filter.SyntaxError
			if !errors.As(err, &se) || se.Offset != filter.MaxLength || !strings.Contains(se.Msg, "too long") || !errors.Is(err, localtable.ErrInvalidInput) {
				t.Errorf("%d bytes: %v", len(s), err)
			}
		}
	}
}
