package filter

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/edmfmt"
)

// Op is a comparison operator.
type Op uint8

// The comparison operators of $filter.
const (
	OpEq Op = iota // eq: equal
	OpNe           // ne: not equal
	OpGt           // gt: greater than
	OpGe           // ge: greater than or equal
	OpLt           // lt: less than
	OpLe           // le: less than or equal
)

var opNames = [...]string{OpEq: "eq", OpNe: "ne", OpGt: "gt", OpGe: "ge", OpLt: "lt", OpLe: "le"}

// String returns the operator's $filter keyword, such as "ge".
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// Flip returns the operator that gives the same result with the operands
// swapped: gt for lt, ge for le, and eq and ne unchanged. "5 lt Age" is
// "Age gt 5".
func (o Op) Flip() Op {
	switch o {
	case OpGt:
		return OpLt
	case OpGe:
		return OpLe
	case OpLt:
		return OpGt
	case OpLe:
		return OpGe
	}
	return o
}

// Expr is a node of a filter's syntax tree: *Comparison, *Constant,
// *AndExpr, *OrExpr or *NotExpr.
// Trees are immutable once built; they are safe for concurrent use.
type Expr interface {
	// String returns the expression in canonical $filter syntax.
	String() string
	exprNode()
}

// Comparison is "Property Op Value". A literal-first comparison such as
// "5 lt Age" is normalized to "Age gt 5", and a bare Boolean property
// "IsActive" to "IsActive eq true".
type Comparison struct {
	Property string
	Op       Op
	Value    localtable.Value
}

// Constant is a bare Boolean literal used as a condition, as in "true"
// or "false or Age gt 3": true matches every entity, false none. It is
// not a comparison, so it does not count toward MaxComparisons.
type Constant struct {
	Value bool // the literal: true or false
}

// AndExpr is "Left and Right".
type AndExpr struct{ Left, Right Expr }

// OrExpr is "Left or Right".
type OrExpr struct{ Left, Right Expr }

// NotExpr is "not X".
type NotExpr struct{ X Expr }

func (*Comparison) exprNode() {}
func (*Constant) exprNode()   {}
func (*AndExpr) exprNode()    {}
func (*OrExpr) exprNode()     {}
func (*NotExpr) exprNode()    {}

// String returns "Property op literal".
func (c *Comparison) String() string {
	var b strings.Builder
	writeExpr(&b, c)
	return b.String()
}

// String returns "true" or "false".
func (c *Constant) String() string { return strconv.FormatBool(c.Value) }

// String returns the conjunction, parenthesizing only where the tree needs
// it.
func (a *AndExpr) String() string {
	var b strings.Builder
	writeExpr(&b, a)
	return b.String()
}

// String returns the disjunction, parenthesizing only where the tree needs
// it.
func (o *OrExpr) String() string {
	var b strings.Builder
	writeExpr(&b, o)
	return b.String()
}

// String returns "not (X)", "not not (…)" for a negated negation, or
// "not true" for a negated constant.
func (n *NotExpr) String() string {
	var b strings.Builder
	writeExpr(&b, n)
	return b.String()
}

// writeExpr writes e in canonical syntax. Binary operators associate to
// the left, so a right operand of the same operator, and an Or operand of
// an And, are parenthesized; so is the operand of not, unless it is itself
// a not or a constant. Parsing the output yields the same tree.
func writeExpr(b *strings.Builder, e Expr) {
	switch e := e.(type) {
	case *Comparison:
		b.WriteString(e.Property)
		b.WriteByte(' ')
		b.WriteString(e.Op.String())
		b.WriteByte(' ')
		b.WriteString(Literal(e.Value))
	case *Constant:
		b.WriteString(strconv.FormatBool(e.Value))
	case *AndExpr:
		_, lor := e.Left.(*OrExpr)
		writeOperand(b, e.Left, lor)
		b.WriteString(" and ")
		switch e.Right.(type) {
		case *OrExpr, *AndExpr:
			writeOperand(b, e.Right, true)
		default:
			writeOperand(b, e.Right, false)
		}
	case *OrExpr:
		writeExpr(b, e.Left)
		b.WriteString(" or ")
		_, ror := e.Right.(*OrExpr)
		writeOperand(b, e.Right, ror)
	case *NotExpr:
		b.WriteString("not ")
		switch e.X.(type) {
		case *NotExpr, *Constant:
			writeExpr(b, e.X)
		default:
			writeOperand(b, e.X, true)
		}
	default:
		b.WriteString("<nil>")
	}
}

func writeOperand(b *strings.Builder, e Expr, paren bool) {
	if paren {
		b.WriteByte('(')
	}
	writeExpr(b, e)
	if paren {
		b.WriteByte(')')
	}
}

// Literal returns v as a $filter literal: 'text' with quotes doubled, 42,
// 42L, 1.5 (a Double always has a '.' or an exponent, or is NaN, INF or
// -INF), true, datetime'2008-07-10T00:00:00.1234567Z' (trailing zeros of
// the fraction trimmed), guid'…' in lower case, and X'0A0B' in upper-case
// hex. The null Value has no literal and returns "null", which does not
// parse.
func Literal(v localtable.Value) string {
	switch v.Kind() {
	case localtable.KindString:
		return "'" + strings.ReplaceAll(v.String(), "'", "''") + "'"
	case localtable.KindInt32:
		return strconv.FormatInt(int64(v.Int32()), 10)
	case localtable.KindInt64:
		return strconv.FormatInt(v.Int64(), 10) + "L"
	case localtable.KindDouble:
		return formatDouble(v.Double())
	case localtable.KindBool:
		return strconv.FormatBool(v.Bool())
	case localtable.KindDateTime:
		return "datetime'" + edmfmt.DateTime(v.Time()) + "'"
	case localtable.KindGUID:
		return "guid'" + v.GUID().String() + "'"
	case localtable.KindBinary:
		return "X'" + strings.ToUpper(hex.EncodeToString([]byte(v.BinaryString()))) + "'"
	}
	return "null"
}

func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// Filter is a parsed or built $filter expression. It implements
// localtable.Predicate: Match evaluates it with the service's typed
// semantics, KeyRanges plans the key ranges a query must scan, and String
// gives canonical $filter syntax to send to the real service.
//
// No function of the package returns a nil *Filter: the builders And, Or,
// Not, Const and Field's comparisons, and New, Parse and Format, even when
// they fail, return a Filter. A Filter built from invalid input carries an
// error instead of a tree: see Err.
//
// A query refuses a nil *Filter as its filter, with an InvalidInput error
// that says what to do (see localtable.Predicate): a nil pointer stored in
// QueryOptions.Filter is not "no filter". To select every entity, leave
// the filter unset, or pass Const(true); to build a filter up from
// optional conditions, combine them with And, which of no conditions is
// Const(true). The methods of a nil *Filter do not panic: it matches every
// entity, plans a full scan and prints as "", and And, Or and Not take it
// for true.
//
// A Filter is immutable and safe for concurrent use.
type Filter struct {
	root Expr
	err  error // why the builder could not build root

	// The plan, computed once on first use: filters are immutable.
	planOnce sync.Once
	ranges   []localtable.KeyRange
	bounded  bool
	// inRanges is root without the conditions its ranges decide (nil:
	// none remain), when decided is set: see MatchInRanges.
	inRanges Expr
	decided  bool
}

// New returns a Filter of the expression e. If e is nil or has a nil
// node, a property name no filter can write, an unknown operator, or a
// literal value without a literal form (null, a string that is not valid
// UTF-8, a DateTime outside years 1 to 9999), the Filter carries the
// error: see Err.
func New(e Expr) *Filter {
	if err := validate(e); err != nil {
		return &Filter{err: err}
	}
	return &Filter{root: e}
}

// Err returns the error of a Filter that could not be built: an invalid
// property name, a value without a literal, an invalid tree given to New.
// It is nil for a valid or a parsed Filter, and for a nil Filter. The
// error wraps localtable.ErrInvalidInput.
//
// A Filter with an error matches no entity and plans no ranges, its
// String does not parse (so the service refuses it too), and a query
// given it as its filter fails with the error: localtable's queries
// (Table.Query, QueryAll, Count, QueryAs) and Account.ListTables check Err
// before they scan. Builders combine
// errors: And, Or and Not of a Filter with an error carry it.
func (f *Filter) Err() error {
	if f == nil {
		return nil
	}
	return f.err
}

// Expr returns the root of the filter's syntax tree, or nil for a nil
// Filter or one that carries an error.
func (f *Filter) Expr() Expr {
	if f == nil {
		return nil
	}
	return f.root
}

// String returns the filter in canonical $filter syntax. Parsing it yields
// an identical tree. For a Filter that carries an error it returns
// "<invalid filter: …>" with the error, which does not parse.
func (f *Filter) String() string {
	switch {
	case f == nil:
		return ""
	case f.err != nil:
		return "<invalid filter: " + f.err.Error() + ">"
	}
	return f.root.String()
}

// Equal reports whether two expression trees are identical: same shape,
// operators, property names, and literal values (by Value.Equal, so a NaN
// literal equals a NaN literal).
func Equal(a, b Expr) bool {
	switch a := a.(type) {
	case *Comparison:
		b, ok := b.(*Comparison)
		return ok && a.Property == b.Property && a.Op == b.Op && a.Value.Equal(b.Value)
	case *Constant:
		b, ok := b.(*Constant)
		return ok && a.Value == b.Value
	case *AndExpr:
		b, ok := b.(*AndExpr)
		return ok && Equal(a.Left, b.Left) && Equal(a.Right, b.Right)
	case *OrExpr:
		b, ok := b.(*OrExpr)
		return ok && Equal(a.Left, b.Left) && Equal(a.Right, b.Right)
	case *NotExpr:
		b, ok := b.(*NotExpr)
		return ok && Equal(a.X, b.X)
	case nil:
		return b == nil
	}
	return false
}

// Filter is a localtable.Predicate.
var _ localtable.Predicate = (*Filter)(nil)
