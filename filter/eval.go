package filter

import (
	"bytes"
	"cmp"
	"math"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/keyenc"
)

// Match reports whether e satisfies the filter, evaluated as the service
// does (see the package documentation for the typing rules). A nil Filter
// matches every entity; a Filter that carries an error (see Err) matches
// none.
func (f *Filter) Match(e *localtable.Entity) bool {
	switch {
	case f == nil:
		return true
	case f.err != nil:
		return false
	}
	return eval(f.root, e)
}

// MatchReader reports whether the entity r reads satisfies the filter, as
// Match does; it makes *Filter a localtable.ReaderPredicate, so that a
// query evaluates the filter on each entity's stored record. It reads only
// the properties the filter compares, and keeps none of them.
func (f *Filter) MatchReader(r localtable.PropertyReader) bool {
	switch {
	case f == nil:
		return true
	case f.err != nil:
		return false
	}
	return eval(f.root, r)
}

// MatchInRanges reports what MatchReader does for an entity whose keys
// lie within the ranges KeyRanges returns; it makes *Filter a
// localtable.RangeReaderPredicate. It leaves out the comparisons of the
// filter's top-level and chain that every key of those ranges satisfies:
// "PartitionKey eq 'p' and Age gt 50" compares Age alone, since each of
// its entities is in partition p. For an entity outside the ranges its
// result is unspecified.
func (f *Filter) MatchInRanges(r localtable.PropertyReader) bool {
	switch {
	case f == nil:
		return true
	case f.err != nil:
		return false
	}
	f.planOnce.Do(f.makePlan)
	if !f.decided {
		return eval(f.root, r)
	}
	return f.inRanges == nil || eval(f.inRanges, r)
}

// Eval evaluates the expression x against entity e.
func Eval(x Expr, e *localtable.Entity) bool { return eval(x, e) }

// eval evaluates x against the entity r reads.
func eval(x Expr, r localtable.PropertyReader) bool {
	switch x := x.(type) {
	case *Comparison:
		v, ok := r.Property(x.Property)
		return ok && Compare(v, x.Op, x.Value)
	case *Constant:
		return x.Value
	case *AndExpr:
		return eval(x.Left, r) && eval(x.Right, r)
	case *OrExpr:
		return eval(x.Left, r) || eval(x.Right, r)
	case *NotExpr:
		return !eval(x.X, r)
	}
	return false
}

// Compare reports whether "prop op lit" holds for a property value prop
// and a literal lit, by the service's rules:
//
//   - Values of different types never compare: the result is false for
//     every operator, ne included. The one exception is an Int32 literal,
//     which is compared by value with Int32, Int64 and Double properties.
//   - Strings compare ordinally by UTF-16 code unit.
//   - Doubles compare as IEEE 754: NaN is unordered, so every operator but
//     ne is false, and ne is true; 0 equals -0.
//   - Booleans order false before true.
//   - DateTimes compare at full 100 ns precision.
//   - Guids compare by the bytes of their canonical text form, so by that
//     text; Binary values compare bytewise, a prefix first.
//
// A null prop (an absent property) makes every comparison false.
func Compare(prop localtable.Value, op Op, lit localtable.Value) bool {
	pk, lk := prop.Kind(), lit.Kind()
	if pk == localtable.KindNull || lk == localtable.KindNull {
		return false
	}
	if pk != lk {
		if lk != localtable.KindInt32 {
			return false
		}
		switch pk {
		case localtable.KindInt64:
			return result(op, cmp.Compare(prop.Int64(), int64(lit.Int32())))
		case localtable.KindDouble:
			return compareDouble(op, prop.Double(), float64(lit.Int32()))
		}
		return false
	}
	var c int
	switch pk {
	case localtable.KindString:
		c = keyenc.CompareUTF16(prop.String(), lit.String())
	case localtable.KindInt32:
		c = cmp.Compare(prop.Int32(), lit.Int32())
	case localtable.KindInt64:
		c = cmp.Compare(prop.Int64(), lit.Int64())
	case localtable.KindDouble:
		return compareDouble(op, prop.Double(), lit.Double())
	case localtable.KindBool:
		c = cmp.Compare(b2i(prop.Bool()), b2i(lit.Bool()))
	case localtable.KindDateTime:
		c = cmp.Compare(prop.Ticks(), lit.Ticks())
	case localtable.KindGUID:
		a, b := prop.GUID(), lit.GUID()
		c = bytes.Compare(a[:], b[:])
	case localtable.KindBinary:
		c = strings.Compare(prop.BinaryString(), lit.BinaryString())
	default:
		return false
	}
	return result(op, c)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// result applies op to a three-way comparison.
func result(op Op, c int) bool {
	switch op {
	case OpEq:
		return c == 0
	case OpNe:
		return c != 0
	case OpGt:
		return c > 0
	case OpGe:
		return c >= 0
	case OpLt:
		return c < 0
	case OpLe:
		return c <= 0
	}
	return false
}

func compareDouble(op Op, a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return op == OpNe
	}
	switch {
	case a < b:
		return result(op, -1)
	case a > b:
		return result(op, 1)
	}
	return result(op, 0)
}

var _ localtable.RangeReaderPredicate = (*Filter)(nil)
