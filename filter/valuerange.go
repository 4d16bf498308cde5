package filter

import (
	"math"

	"github.com/localtable/localtable"
)

// PropertyRanges returns ranges of values of property name that hold the
// value of every entity the filter matches, for a query to read an index
// on the property (it makes *Filter a localtable.IndexPredicate). ok is
// false when the filter does not bound the property.
//
// A comparison "name op literal" (eq, gt, ge, lt, le) bounds it to the
// literal's type, by Compare's rules: an Int32 literal bounds the Int32,
// Int64 and Double values, as the service compares it with all three; a
// NaN literal matches nothing. "and" intersects what its sides bound, "or"
// joins them when both do; ne, not and comparisons of other properties
// bound nothing. A Filter that carries an error bounds every property to
// nothing, as it matches no entity.
func (f *Filter) PropertyRanges(name string) ([]localtable.ValueRange, bool) {
	switch {
	case f == nil:
		return nil, false
	case f.err != nil:
		return nil, true
	}
	return valueRanges(f.root, name)
}

var _ localtable.IndexPredicate = (*Filter)(nil)

// PropertyRangesExact reports whether the filter is exactly "the value of
// property name lies in PropertyRanges(name)": it compares that property
// alone (eq, gt, ge, lt, le, joined by and and or, or a constant false),
// so that an index on it answers the filter without reading the entities
// (a Count reads the index alone).
func (f *Filter) PropertyRangesExact(name string) bool {
	if f == nil || f.err != nil {
		return false
	}
	return exactOn(f.root, name)
}

// exactOn reports whether x compares property name alone, with operators
// whose value ranges are exact.
func exactOn(x Expr, name string) bool {
	switch x := x.(type) {
	case *Comparison:
		return x.Property == name && x.Op != OpNe
	case *Constant:
		return !x.Value
	case *AndExpr:
		return exactOn(x.Left, name) && exactOn(x.Right, name)
	case *OrExpr:
		return exactOn(x.Left, name) && exactOn(x.Right, name)
	}
	return false
}

// valueRanges returns the ranges of name's values that x can match.
func valueRanges(x Expr, name string) ([]localtable.ValueRange, bool) {
	switch x := x.(type) {
	case *Comparison:
		if x.Property != name {
			return nil, false
		}
		return comparisonRanges(x.Op, x.Value)
	case *Constant:
		if x.Value {
			return nil, false
		}
		return nil, true
	case *AndExpr:
		l, lok := valueRanges(x.Left, name)
		r, rok := valueRanges(x.Right, name)
		switch {
		case lok && rok:
			return intersectRanges(l, r), true
		case lok:
			return l, true
		case rok:
			return r, true
		}
		return nil, false
	case *OrExpr:
		// The ors of a chain (a long "or" is one, nested to one side)
		// are joined into one slice as they are found: joining each
		// side's own would copy the chain's ranges once per level.
		var out []localtable.ValueRange
		stack := []Expr{x}
		for len(stack) > 0 {
			e := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if o, ok := e.(*OrExpr); ok {
				stack = append(stack, o.Right, o.Left) // Left first out
				continue
			}
			r, ok := valueRanges(e, name)
			if !ok {
				return nil, false
			}
			out = append(out, r...)
		}
		return out, true
	}
	return nil, false
}

// comparisonRanges returns the ranges of values that "op lit" holds for.
func comparisonRanges(op Op, lit localtable.Value) ([]localtable.ValueRange, bool) {
	if op == OpNe {
		return nil, false
	}
	if lit.Kind() == localtable.KindDouble && math.IsNaN(lit.Double()) {
		return nil, true // NaN is unordered: only ne holds
	}
	lits := []localtable.Value{lit}
	if lit.Kind() == localtable.KindInt32 {
		v := lit.Int32()
		lits = append(lits, localtable.Int64Value(int64(v)), localtable.DoubleValue(float64(v)))
	}
	out := make([]localtable.ValueRange, 0, len(lits))
	for _, l := range lits {
		r := localtable.ValueRange{Kind: l.Kind()}
		switch op {
		case OpEq:
			r.Low, r.High = l, l
		case OpGt:
			r.Low, r.LowExclusive = l, true
		case OpGe:
			r.Low = l
		case OpLt:
			r.High, r.HighExclusive = l, true
		case OpLe:
			r.High = l
		}
		out = append(out, r)
	}
	return out, true
}

// compareValues orders two non-NaN values of one Kind as Compare does.
func compareValues(a, b localtable.Value) int {
	switch {
	case Compare(a, OpLt, b):
		return -1
	case Compare(a, OpGt, b):
		return 1
	}
	return 0
}

// intersectRanges returns the ranges of the values in both a and b.
func intersectRanges(a, b []localtable.ValueRange) []localtable.ValueRange {
	out := []localtable.ValueRange{}
	for _, x := range a {
		for _, y := range b {
			if x.Kind != y.Kind {
				continue
			}
			r := x
			if !y.Low.IsNull() {
				if c := compareValues(y.Low, r.Low); r.Low.IsNull() || c > 0 || (c == 0 && y.LowExclusive) {
					r.Low, r.LowExclusive = y.Low, y.LowExclusive || (c == 0 && r.LowExclusive)
				}
			}
			if !y.High.IsNull() {
				if c := compareValues(y.High, r.High); r.High.IsNull() || c < 0 || (c == 0 && y.HighExclusive) {
					r.High, r.HighExclusive = y.High, y.HighExclusive || (c == 0 && r.HighExclusive)
				}
			}
			if !r.Low.IsNull() && !r.High.IsNull() {
				c := compareValues(r.Low, r.High)
				if c > 0 || (c == 0 && (r.LowExclusive || r.HighExclusive)) {
					continue // empty
				}
			}
			out = append(out, r)
		}
	}
	return out
}
