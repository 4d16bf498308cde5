package filter

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/localtable/localtable"
)

// MaxComparisons is the service's limit on the number of discrete
// comparisons in one $filter. Parse enforces it.
const MaxComparisons = 15

// MaxDepth is the deepest nesting of parentheses and not operators that
// the parser accepts.
const MaxDepth = 100

// MaxLength is the longest filter, in bytes, that ParseWithOptions
// accepts, whatever its Options: a hard cap, so that no input can make
// parsing and planning slow. Parsing is linear in the length and planning
// O(n log n) in the number of comparisons, so a filter of MaxLength bytes
// is parsed and planned in well under a second; a longer one is refused
// at once. The service's own limit, MaxComparisons, is far smaller.
const MaxLength = 1 << 20

// Options configure ParseWithOptions. The zero Options (or nil) impose no
// comparison limit, for embedded use; Parse uses the service's limits.
// MaxDepth and MaxLength hold whatever the Options.
type Options struct {
	// MaxComparisons is the largest number of comparisons allowed; zero or
	// negative means unlimited.
	MaxComparisons int
}

// SyntaxError reports an invalid filter: the byte offset into the filter
// where the problem is and what was expected there. It unwraps to a
// *localtable.Error with code InvalidInput, so errors.Is(err,
// localtable.ErrInvalidInput) holds and the HTTP layer answers 400.
type SyntaxError struct {
	Offset int    // byte offset in the filter
	Msg    string // what was wrong, and what was expected
}

// Error returns "filter: syntax error at offset N: msg".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("filter: syntax error at offset %d: %s", e.Offset, e.Msg)
}

// Unwrap returns an InvalidInput *localtable.Error carrying the message.
func (e *SyntaxError) Unwrap() error {
	return &localtable.Error{Code: localtable.CodeInvalidInput, Message: fmt.Sprintf("The query specified in the URI is not valid: %s at offset %d.", e.Msg, e.Offset)}
}

// Parse parses a $filter expression as the service does, enforcing its
// limit of MaxComparisons comparisons. An empty or blank filter is an
// error: a query without a filter passes a nil predicate instead.
//
// Errors are *SyntaxError.
//
// On error the returned Filter is not nil: it carries the error (Err), so
// a query given it despite the error fails with that error.
func Parse(s string) (*Filter, error) {
	return ParseWithOptions(s, &Options{MaxComparisons: MaxComparisons})
}

// ParseWithOptions is Parse with configurable limits; nil opts means the
// zero Options (no comparison limit). Whatever opts say, a filter longer
// than MaxLength bytes is refused, as is nesting deeper than MaxDepth.
func ParseWithOptions(s string, opts *Options) (f *Filter, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	defer func() {
		if err != nil {
			f = &Filter{err: err}
		}
	}()
	if len(s) > MaxLength {
		return nil, &SyntaxError{MaxLength, fmt.Sprintf("filter too long: %d bytes, at most %d are allowed", len(s), MaxLength)}
	}
	if !utf8.ValidString(s) {
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return nil, &SyntaxError{i, "invalid UTF-8"}
			}
			i += n
		}
	}
	p := &parser{lex: lex(s), maxCmps: o.MaxComparisons}
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(*SyntaxError)
			if !ok {
				panic(r)
			}
			f, err = nil, se
		}
	}()
	p.next()
	if p.tok.typ == itemEOF {
		p.errorf(p.tok.pos, "empty filter")
	}
	e := p.parseOr()
	if p.tok.typ != itemEOF {
		p.errorf(p.tok.pos, "expected 'and', 'or' or end of filter, found %s", p.tok.describe())
	}
	return &Filter{root: e}, nil
}

// parser is a recursive-descent parser over the lexer's items. Errors
// unwind by panicking with a *SyntaxError, recovered in ParseWithOptions.
//
// Grammar, loosest first (not binds tighter than comparison, as in OData):
//
//	or    = and { "or" and }
//	and   = cmp { "and" cmp }
//	cmp   = unary [ op unary ]        one side a property, the other a literal
//	unary = "not" unary | primary
//	primary = "(" or ")" | property | literal
//
// A cmp without an operator is a condition: a Boolean expression, a bare
// property (P eq true), or a bare true or false.
type parser struct {
	lex     *lexer
	tok     item
	depth   int
	cmps    int
	maxCmps int
}

func (p *parser) next() {
	p.tok = p.lex.nextItem()
	if p.tok.typ == itemError {
		panic(&SyntaxError{p.tok.pos, p.tok.val})
	}
}

func (p *parser) errorf(pos int, format string, args ...any) {
	panic(&SyntaxError{pos, fmt.Sprintf(format, args...)})
}

func (p *parser) enter(pos int) {
	p.depth++
	if p.depth > MaxDepth {
		p.errorf(pos, "filter nested too deeply (more than %d levels)", MaxDepth)
	}
}

func (p *parser) countComparison(pos int) {
	p.cmps++
	if p.maxCmps > 0 && p.cmps > p.maxCmps {
		p.errorf(pos, "too many comparisons: at most %d are allowed", p.maxCmps)
	}
}

func (p *parser) parseOr() Expr {
	left := p.parseAnd()
	for p.tok.typ == itemOr {
		p.next()
		left = &OrExpr{left, p.parseAnd()}
	}
	return left
}

func (p *parser) parseAnd() Expr {
	left := p.parseCmp()
	for p.tok.typ == itemAnd {
		p.next()
		left = &AndExpr{left, p.parseCmp()}
	}
	return left
}

// term is an operand: a Boolean expression, a property, or a literal.
type term struct {
	pos           int
	expr          Expr             // a Boolean expression, or nil
	prop          string           // a property name, if isProp
	lit           localtable.Value // a literal, if isLit
	isProp, isLit bool
}

var cmpOps = map[itemType]Op{
	itemEq: OpEq, itemNe: OpNe, itemGt: OpGt, itemGe: OpGe, itemLt: OpLt, itemLe: OpLe,
}

func (p *parser) parseCmp() Expr {
	left := p.parseUnary()
	op, ok := cmpOps[p.tok.typ]
	if !ok {
		return p.boolExpr(left)
	}
	opPos := p.tok.pos
	p.next()
	right := p.parseUnary()
	for _, t := range []term{left, right} {
		if t.expr != nil {
			p.errorf(t.pos, "operand of %s must be a property or a literal, not a Boolean expression", op)
		}
	}
	p.countComparison(opPos)
	switch {
	case left.isProp && right.isLit:
		return &Comparison{left.prop, op, right.lit}
	case left.isLit && right.isProp:
		return &Comparison{right.prop, op.Flip(), left.lit}
	case left.isProp:
		p.errorf(right.pos, "expected a literal after %s: one side of a comparison must be a constant", op)
	}
	p.errorf(left.pos, "expected a property name: one side of a comparison must be a property")
	return nil
}

// boolExpr converts an operand used as a condition: a bare property P
// means "P eq true", and a bare true or false is a Constant, which is not
// a comparison and is not counted.
func (p *parser) boolExpr(t term) Expr {
	switch {
	case t.expr != nil:
		return t.expr
	case t.isProp:
		p.countComparison(t.pos)
		return &Comparison{t.prop, OpEq, localtable.BoolValue(true)}
	case t.isLit && t.lit.Kind() == localtable.KindBool:
		return &Constant{t.lit.Bool()}
	}
	p.errorf(p.tok.pos, "expected comparison operator after literal, found %s", p.tok.describe())
	return nil
}

func (p *parser) parseUnary() term {
	if p.tok.typ != itemNot {
		return p.parsePrimary()
	}
	pos := p.tok.pos
	p.next()
	// "not (…)" counts one level, for the parenthesis.
	paren := p.tok.typ == itemLParen
	if !paren {
		p.enter(pos)
	}
	x := p.parseUnary()
	if x.isLit && x.lit.Kind() != localtable.KindBool {
		p.errorf(x.pos, "operand of not must be a Boolean expression, not a literal of type %s", x.lit.Kind())
	}
	e := p.boolExpr(x)
	if !paren {
		p.depth--
	}
	return term{pos: pos, expr: &NotExpr{e}}
}

func (p *parser) parsePrimary() term {
	t := p.tok
	switch t.typ {
	case itemLParen:
		p.enter(t.pos)
		p.next()
		e := p.parseOr()
		if p.tok.typ != itemRParen {
			p.errorf(p.tok.pos, "expected ')' or a logical operator, found %s", p.tok.describe())
		}
		p.depth--
		p.next()
		return term{pos: t.pos, expr: e}
	case itemIdent:
		p.next()
		return term{pos: t.pos, prop: t.val, isProp: true}
	case itemString, itemNumber, itemTrue, itemFalse, itemDateTime, itemGUID, itemBinary:
		v, msg := parseLiteral(t)
		if msg != "" {
			p.errorf(t.pos, "%s", msg)
		}
		p.next()
		return term{pos: t.pos, lit: v, isLit: true}
	}
	p.errorf(t.pos, "expected a property, a literal, 'not' or '(', found %s", t.describe())
	return term{}
}

// parseLiteral converts a literal item to a Value, or returns a message.
func parseLiteral(t item) (localtable.Value, string) {
	s := t.val
	switch t.typ {
	case itemString:
		return localtable.StringValue(strings.ReplaceAll(s[1:len(s)-1], "''", "'")), ""
	case itemTrue:
		return localtable.BoolValue(true), ""
	case itemFalse:
		return localtable.BoolValue(false), ""
	case itemNumber:
		return parseNumber(s)
	}
	q := strings.IndexByte(s, '\'')
	body := s[q+1 : len(s)-1]
	switch t.typ {
	case itemDateTime:
		ticks, msg := parseDateTime(body)
		if msg != "" {
			return localtable.Value{}, fmt.Sprintf("invalid datetime literal %q: %s", body, msg)
		}
		return localtable.DateTimeTicksValue(ticks), ""
	case itemGUID:
		if len(body) != 36 {
			return localtable.Value{}, fmt.Sprintf("invalid guid literal %q: want 8-4-4-4-12 hexadecimal digits", body)
		}
		g, err := localtable.ParseGUID(body)
		if err != nil {
			return localtable.Value{}, fmt.Sprintf("invalid guid literal %q: want 8-4-4-4-12 hexadecimal digits", body)
		}
		return localtable.GUIDValue(g), ""
	case itemBinary:
		if len(body)%2 != 0 {
			return localtable.Value{}, fmt.Sprintf("invalid binary literal %q: odd number of hex digits", body)
		}
		b, err := hex.DecodeString(body)
		if err != nil {
			return localtable.Value{}, fmt.Sprintf("invalid binary literal %q: not hexadecimal", body)
		}
		return localtable.BinaryValue(b), ""
	}
	return localtable.Value{}, "unexpected literal"
}

// parseNumber types a numeric literal: an L suffix makes Int64; a '.', an
// exponent, a d suffix, NaN or INF make Double; otherwise Int32, and an
// integer beyond Int32's range is an error, as in the service.
func parseNumber(s string) (localtable.Value, string) {
	switch s {
	case "NaN":
		return localtable.DoubleValue(math.NaN()), ""
	case "INF":
		return localtable.DoubleValue(math.Inf(1)), ""
	case "-INF":
		return localtable.DoubleValue(math.Inf(-1)), ""
	}
	switch last := s[len(s)-1]; {
	case last == 'L' || last == 'l':
		n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
		if err != nil {
			return localtable.Value{}, fmt.Sprintf("Int64 literal %s out of range", s)
		}
		return localtable.Int64Value(n), ""
	case last == 'd' || last == 'D' || strings.ContainsAny(s, ".eE"):
		t := strings.TrimRight(s, "dD")
		f, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return localtable.Value{}, fmt.Sprintf("Double literal %s out of range", s)
		}
		return localtable.DoubleValue(f), ""
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return localtable.Value{}, fmt.Sprintf("unrecognized Edm.Int32 literal %s: out of range (use an L suffix for Int64)", s)
	}
	return localtable.Int32Value(int32(n)), ""
}

// parseDateTime parses yyyy-MM-ddTHH:mm[:ss[.fffffff]] followed by Z, a
// ±HH:mm offset, or nothing (UTC), and returns 100 ns ticks.
func parseDateTime(s string) (int64, string) {
	const bad = "want yyyy-MM-ddTHH:mm:ss[.fffffff]Z"
	num := func(i, n int) (int, bool) {
		if i+n > len(s) {
			return 0, false
		}
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if !isDigit(c) {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 2)
	day, ok3 := num(8, 2)
	hour, ok4 := num(11, 2)
	minute, ok5 := num(14, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' {
		return 0, bad
	}
	i := 16
	sec, nanos := 0, 0
	if i < len(s) && s[i] == ':' {
		var ok bool
		if sec, ok = num(i+1, 2); !ok {
			return 0, bad
		}
		i += 3
		if i < len(s) && s[i] == '.' {
			i++
			j := i
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			switch {
			case j == i:
				return 0, "expected digits after '.'"
			case j-i > 7:
				return 0, "more than 7 fractional digits"
			}
			f, _ := num(i, j-i)
			for k := j - i; k < 9; k++ {
				f *= 10
			}
			nanos = f
			i = j
		}
	}
	offset := 0
	switch rest := s[i:]; {
	case rest == "" || rest == "Z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := num(i+1, 2)
		om, ok2 := num(i+4, 2)
		if !ok1 || !ok2 || oh > 14 || om > 59 {
			return 0, "invalid time zone offset"
		}
		offset = (oh*60 + om) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return 0, bad
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 || year < 1 {
		return 0, "field out of range"
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nanos, time.UTC)
	if t.Day() != day {
		return 0, "day out of range"
	}
	t = t.Add(-time.Duration(offset) * time.Second)
	if t.Year() < 1 || t.Year() > 9999 {
		return 0, "out of range"
	}
	return localtable.TimeToTicks(t), ""
}
