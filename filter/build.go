package filter

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/localtable/localtable"
)

// Field names a property in a filter under construction. Its methods build
// comparisons from typed Go values, quoted correctly, so that filters are
// never assembled by concatenating strings.
//
// A Field made by Prop from an invalid name carries the error, and so does
// every filter built from it (see Filter.Err).
type Field struct {
	name string
	err  error
}

// Prop returns the Field of a property. The name must be a valid property
// name (a letter or '_' followed by letters, digits and '_') and not a
// keyword of the filter language (and, or, not, eq, ne, gt, ge, lt, le,
// true, false, NaN, INF), since no filter could name it; otherwise the
// Field, and every filter built from it, carries an error that wraps
// localtable.ErrInvalidInput.
func Prop(name string) Field {
	if !validName(name) {
		return Field{name, buildErr("invalid property name %q: a property is a letter or '_' followed by letters, digits and '_', and not a keyword", name)}
	}
	return Field{name: name}
}

// PartitionKey returns the Field of the PartitionKey.
func PartitionKey() Field { return Field{name: localtable.PartitionKeyName} }

// RowKey returns the Field of the RowKey.
func RowKey() Field { return Field{name: localtable.RowKeyName} }

// Timestamp returns the Field of the Timestamp.
func Timestamp() Field { return Field{name: localtable.TimestampName} }

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

// buildErr returns a builder error: an InvalidInput *localtable.Error.
func buildErr(format string, args ...any) error {
	return &localtable.Error{Code: localtable.CodeInvalidInput, Message: "filter: " + fmt.Sprintf(format, args...)}
}

// Int32 returns v as an Edm.Int32 literal, printed without a suffix. It
// compares by value with Int32, Int64 and Double properties. Passing an
// int32 to a comparison has the same effect; Int32 says so explicitly.
func Int32(v int32) localtable.Value { return localtable.Int32Value(v) }

// Int64 returns v as an Edm.Int64 literal, printed with the L suffix,
// whatever its size. An Int64 literal compares only with Int64
// properties: use it to match those and never an Int32 or Double property
// of the same name. A Go integer passed to a comparison is an Int32
// literal when it fits one, as "Age eq 42" is in the service's syntax.
func Int64(v int64) localtable.Value { return localtable.Int64Value(v) }

// Compare returns the filter "f op v". The value's Go type chooses the
// literal's Edm type:
//
//   - Integers of every Go type, int, int64, uint64 and named types such
//     as "type Age int" included, are Edm.Int32 literals when the value
//     fits Int32, as an unsuffixed "42" is in the service's syntax, and
//     Edm.Int64 (with the L suffix) beyond. An Int32 literal compares by
//     value with Int32, Int64 and Double properties, so Eq(42) finds 42
//     whichever numeric type the property has; an Int64 literal compares
//     only with Int64 properties. Int64 and Int32 choose the type
//     explicitly. A uint64 beyond math.MaxInt64 has no literal.
//   - float64 and float32 are Edm.Double; NaN, INF and -INF have
//     literals. A Double literal compares only with Double properties.
//   - string is Edm.String, bool Edm.Boolean, []byte Edm.Binary, and the
//     named types of those kinds the same.
//   - time.Time is Edm.DateTime, truncated to 100 ns, in years 1 to 9999;
//     localtable.GUID is Edm.Guid; a localtable.Value is itself.
//
// Misuse does not panic: a nil value, a value of another type, a string
// that is not valid UTF-8, a DateTime without a literal, an unknown Op, or
// a Field with an invalid name make a Filter that carries the error (see
// Filter.Err), matches nothing, and fails a query that uses it.
func (f Field) Compare(op Op, v any) *Filter {
	if f.err != nil {
		return &Filter{err: f.err}
	}
	if f.name == "" {
		return &Filter{err: buildErr("comparison with the zero Field, which names no property")}
	}
	if int(op) >= len(opNames) {
		return &Filter{err: buildErr("%s compared with an unknown operator %v", f.name, op)}
	}
	val, msg := literalValue(v)
	if msg != "" {
		return &Filter{err: buildErr("%s %s: %s", f.name, op, msg)}
	}
	return &Filter{root: &Comparison{f.name, op, val}}
}

// literalValue converts v to a literal's value by the rules of
// Field.Compare, or says why it cannot be a literal.
func literalValue(v any) (localtable.Value, string) {
	switch x := v.(type) {
	case nil:
		return localtable.Value{}, "a comparison needs a non-null value"
	case localtable.Value:
		return checkValue(x)
	case time.Time:
		return checkValue(localtable.DateTimeValue(x))
	case localtable.GUID:
		return localtable.GUIDValue(x), ""
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return integer(rv.Int()), ""
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return localtable.Value{}, fmt.Sprintf("integer %d (%T) is beyond Int64's range and has no literal", u, v)
		}
		return integer(int64(u)), ""
	case reflect.Float32, reflect.Float64:
		return checkValue(localtable.DoubleValue(rv.Float()))
	case reflect.String:
		return checkValue(localtable.StringValue(rv.String()))
	case reflect.Bool:
		return localtable.BoolValue(rv.Bool()), ""
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return localtable.BinaryValue(rv.Bytes()), ""
		}
	}
	return localtable.Value{}, fmt.Sprintf("a value of type %T has no literal", v)
}

// integer is the literal of a Go integer: Int32 when it fits.
func integer(n int64) localtable.Value {
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return localtable.Int32Value(int32(n))
	}
	return localtable.Int64Value(n)
}

// checkValue rejects the values that have no literal, saying why, and
// gives a NaN its one form, the one its literal parses to.
func checkValue(v localtable.Value) (localtable.Value, string) {
	switch v.Kind() {
	case localtable.KindNull:
		return v, "a comparison needs a non-null value"
	case localtable.KindString:
		if !utf8.ValidString(v.String()) {
			return v, fmt.Sprintf("string %q is not valid UTF-8", v.String())
		}
	case localtable.KindDouble:
		if math.IsNaN(v.Double()) {
			return localtable.DoubleValue(math.NaN()), ""
		}
	case localtable.KindDateTime:
		if t := v.Ticks(); t < 0 || t > localtable.TimeToTicks(localtable.MaxDateTime) {
			return v, fmt.Sprintf("datetime out of range (ticks %d): a literal's year is 1 to 9999", t)
		}
	}
	return v, ""
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

// firstErr returns the error of the first filter of fs that carries one.
func firstErr(fs []*Filter) error {
	for _, f := range fs {
		if err := f.Err(); err != nil {
			return err
		}
	}
	return nil
}

// And returns the conjunction of fs, grouped from the left. It never
// returns nil. A nil Filter argument is taken for true and left out, and
// And of no filters, or of nil ones only, is Const(true), which matches
// every entity (its String, "true", is a filter the service accepts). So
// conditions gathered one by one combine without a special case:
//
//	var conds []*filter.Filter
//	if minAge > 0 {
//		conds = append(conds, filter.Prop("Age").Ge(minAge))
//	}
//	opts := &localtable.QueryOptions{Filter: filter.And(conds...)}
//
// If a filter of fs carries an error, so does the result.
func And(fs ...*Filter) *Filter {
	if err := firstErr(fs); err != nil {
		return &Filter{err: err}
	}
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
		return Const(true)
	}
	return &Filter{root: e}
}

// Const returns the filter of a bare Boolean literal: Const(true) is
// "true", which matches every entity, and Const(false) is "false", which
// matches none and plans no key ranges.
func Const(v bool) *Filter { return &Filter{root: &Constant{v}} }

// Or returns the disjunction of fs, grouped from the left. It never
// returns nil. A nil Filter argument is taken for true, so Or with a nil
// argument is Const(true), which matches every entity. Or of no filters
// is Const(false), which matches nothing. If a filter of fs carries an
// error, so does the result.
func Or(fs ...*Filter) *Filter {
	if err := firstErr(fs); err != nil {
		return &Filter{err: err}
	}
	if len(fs) == 0 {
		return Const(false)
	}
	var e Expr
	for _, f := range fs {
		switch {
		case f == nil:
			return Const(true)
		case e == nil:
			e = f.root
		default:
			e = &OrExpr{e, f.root}
		}
	}
	return &Filter{root: e}
}

// Not returns the negation of f. It never returns nil. A nil Filter is
// taken for true, so Not(nil) is Const(false), which matches nothing. If f
// carries an error, so does the result.
func Not(f *Filter) *Filter {
	switch {
	case f == nil:
		return Const(false)
	case f.err != nil:
		return &Filter{err: f.err}
	}
	return &Filter{root: &NotExpr{f.root}}
}

// Format binds arguments into a $filter template and parses the result as
// Parse does. Each {} outside a quoted string is replaced by the literal
// of the next argument, converted as Field.Compare converts it (so a
// string is quoted and its quotes doubled, 42 is an Int32 literal and
// Int64(42) is 42L, a time.Time becomes datetime'…'). It is an error if
// the number of placeholders and arguments differ, if an argument has no
// literal, or if the result does not parse; the error wraps
// localtable.ErrInvalidInput, and the Filter returned with it is not nil
// but carries it (see Err), as Parse's does, so that a query given it
// fails instead of selecting every entity.
func Format(format string, args ...any) (f *Filter, err error) {
	defer func() {
		if err != nil {
			f = &Filter{err: err}
		}
	}()
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
				return nil, buildErr("Format: more placeholders than the %d arguments", len(args))
			}
			v, msg := literalValue(args[n])
			if msg != "" {
				return nil, buildErr("Format: argument %d: %s", n, msg)
			}
			b.WriteString(Literal(v))
			n++
			i++
			continue
		}
		b.WriteByte(c)
	}
	if n != len(args) {
		return nil, buildErr("Format: %d placeholders but %d arguments", n, len(args))
	}
	return Parse(b.String())
}

// validate reports the first problem of a tree that has no $filter text:
// a nil node, an invalid property name or operator, or a literal without
// a literal form.
func validate(x Expr) error {
	stack := []Expr{x}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch e := e.(type) {
		case *Comparison:
			if e == nil {
				return errNilNode
			}
			if err := Prop(e.Property).err; err != nil {
				return err
			}
			if int(e.Op) >= len(opNames) {
				return buildErr("%s compared with an unknown operator %v", e.Property, e.Op)
			}
			if _, msg := checkValue(e.Value); msg != "" {
				return buildErr("%s %s: %s", e.Property, e.Op, msg)
			}
		case *Constant:
			if e == nil {
				return errNilNode
			}
		case *AndExpr:
			if e == nil {
				return errNilNode
			}
			stack = append(stack, e.Right, e.Left)
		case *OrExpr:
			if e == nil {
				return errNilNode
			}
			stack = append(stack, e.Right, e.Left)
		case *NotExpr:
			if e == nil {
				return errNilNode
			}
			stack = append(stack, e.X)
		default:
			return errNilNode
		}
	}
	return nil
}

var errNilNode = buildErr("nil node in an expression tree")
