package filter

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/localtable/localtable"
)

// Field names a property in a filter under construction. Its methods build
// comparisons from typed Go values, quoted correctly, so that filters are
// never assembled by concatenating strings.
type Field struct{ name string }

// Prop returns the Field of a property. It panics if name is not a valid
// property name (a letter or '_' followed by letters, digits and '_') or is
// a keyword of the filter language (and, or, not, eq, ne, gt, ge, lt, le,
// true, false, NaN, INF), since no filter could name it.
func Prop(name string) Field {
	if !validName(name) {
		panic(fmt.Sprintf("filter: invalid property name %q", name))
	}
	return Field{name}
}

// PartitionKey returns the Field of the PartitionKey.
func PartitionKey() Field { return Field{localtable.PartitionKeyName} }

// RowKey returns the Field of the RowKey.
func RowKey() Field { return Field{localtable.RowKeyName} }

// Timestamp returns the Field of the Timestamp.
func Timestamp() Field { return Field{localtable.TimestampName} }

func validName(name string) bool {
	if name == "" {
		return false
	}
	if _, ok := keywords[name]; ok {
		return false
	}
	for i, r := range name {
		if r == utf8.RuneError || !identRune(r) || (i == 0 && !identStart(r)) {
			return false
		}
	}
	return true
}

// Compare returns the filter "f op v". v is converted by
// localtable.AnyValue: a string is Edm.String, int32 Edm.Int32, int64 and
// int Edm.Int64, float64 Edm.Double, bool Edm.Boolean, time.Time
// Edm.DateTime, localtable.GUID Edm.Guid, []byte Edm.Binary, and a
// localtable.Value is itself. It panics if v is nil, of another type, or a
// DateTime outside years 1 to 9999, which have no literal.
func (f Field) Compare(op Op, v any) *Filter {
	val, err := literalValue(v)
	if err != nil {
		panic(err.Error())
	}
	return &Filter{root: &Comparison{f.name, op, val}}
}

// literalValue converts v for a comparison, reporting what cannot be a
// literal.
func literalValue(v any) (val localtable.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("filter: %v", r)
		}
	}()
	val = localtable.AnyValue(v)
	switch val.Kind() {
	case localtable.KindNull:
		return val, errors.New("filter: a comparison needs a non-null value")
	case localtable.KindDateTime:
		if t := val.Ticks(); t < 0 || t > localtable.TimeToTicks(localtable.MaxDateTime) {
			return val, fmt.Errorf("filter: datetime out of range (ticks %d)", t)
		}
	}
	return val, nil
}

// Eq returns the filter "f eq v"; see Compare for v.
func (f Field) Eq(v any) *Filter { return f.Compare(OpEq, v) }

// Ne returns the filter "f ne v"; see Compare for v.
func (f Field) Ne(v any) *Filter { return f.Compare(OpNe, v) }

// Gt returns the filter "f gt v"; see Compare for v.
func (f Field) Gt(v any) *Filter { return f.Compare(OpGt, v) }

// Ge returns the filter "f ge v"; see Compare for v.
func (f Field) Ge(v any) *Filter { return f.Compare(OpGe, v) }

// Lt returns the filter "f lt v"; see Compare for v.
func (f Field) Lt(v any) *Filter { return f.Compare(OpLt, v) }

// Le returns the filter "f le v"; see Compare for v.
func (f Field) Le(v any) *Filter { return f.Compare(OpLe, v) }

// And returns the conjunction of fs, grouped from the left. A nil Filter
// matches everything and is left out; And of no non-nil filters is nil.
func And(fs ...*Filter) *Filter {
	var e Expr
	for _, f := range fs {
		switch {
		case f == nil:
		case e == nil:
			e = f.root
		default:
			e = &AndExpr{e, f.root}
		}
	}
	if e == nil {
		return nil
	}
	return &Filter{root: e}
}

// Const returns the filter of a bare Boolean literal: Const(true) is
// "true", which matches every entity, and Const(false) is "false", which
// matches none and plans no key ranges.
func Const(v bool) *Filter { return &Filter{root: &Constant{v}} }

// Or returns the disjunction of fs, grouped from the left. A nil Filter
// matches everything, so Or with a nil argument is nil. Or of no filters
// is Const(false), which matches nothing.
func Or(fs ...*Filter) *Filter {
	if len(fs) == 0 {
		return Const(false)
	}
	var e Expr
	for _, f := range fs {
		switch {
		case f == nil:
			return nil
		case e == nil:
			e = f.root
		default:
			e = &OrExpr{e, f.root}
		}
	}
	return &Filter{root: e}
}

// Not returns the negation of f. A nil Filter matches everything, so
// Not(nil) is Const(false), which matches nothing.
func Not(f *Filter) *Filter {
	if f == nil {
		return Const(false)
	}
	return &Filter{root: &NotExpr{f.root}}
}

// Format binds arguments into a $filter template and parses the result as
// Parse does. Each {} outside a quoted string is replaced by the literal
// of the next argument, converted as Field.Compare converts it (so a
// string is quoted and its quotes doubled, an int64 gets an L suffix, a
// time.Time becomes datetime'…'). It is an error if the number of
// placeholders and arguments differ, if an argument has no literal, or if
// the result does not parse.
func Format(format string, args ...any) (*Filter, error) {
	var b strings.Builder
	n := 0
	inString := false
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch {
		case c == '\'':
			inString = !inString
		case !inString && c == '{' && i+1 < len(format) && format[i+1] == '}':
			if n >= len(args) {
				return nil, fmt.Errorf("filter: Format: more placeholders than the %d arguments", len(args))
			}
			v, err := literalValue(args[n])
			if err != nil {
				return nil, fmt.Errorf("filter: Format: argument %d: %w", n, err)
			}
			b.WriteString(Literal(v))
			n++
			i++
			continue
		}
		b.WriteByte(c)
	}
	if n != len(args) {
		return nil, fmt.Errorf("filter: Format: %d placeholders but %d arguments", n, len(args))
	}
	return Parse(b.String())
}
