package filter

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// itemType identifies the type of a lexical item.
type itemType int

const (
	itemError    itemType = iota // error; val is the message
	itemEOF                      // end of input
	itemLParen                   // (
	itemRParen                   // )
	itemIdent                    // property name
	itemAnd                      // and
	itemOr                       // or
	itemNot                      // not
	itemEq                       // eq
	itemNe                       // ne
	itemGt                       // gt
	itemGe                       // ge
	itemLt                       // lt
	itemLe                       // le
	itemTrue                     // true
	itemFalse                    // false
	itemString                   // 'text', quotes included
	itemNumber                   // 42, -42, 42L, 1.5, 1e3, 1.5d, NaN, INF, -INF
	itemDateTime                 // datetime'…'
	itemGUID                     // guid'…'
	itemBinary                   // X'…' or binary'…'
)

var itemNames = [...]string{
	itemError: "error", itemEOF: "EOF", itemLParen: "(", itemRParen: ")",
	itemIdent: "ident", itemAnd: "and", itemOr: "or", itemNot: "not",
	itemEq: "eq", itemNe: "ne", itemGt: "gt", itemGe: "ge", itemLt: "lt", itemLe: "le",
	itemTrue: "true", itemFalse: "false", itemString: "string", itemNumber: "number",
	itemDateTime: "datetime", itemGUID: "guid", itemBinary: "binary",
}

func (t itemType) String() string { return itemNames[t] }

// keywords are the reserved words. They are case-sensitive, as in the
// service: "AND" and "True" are property names.
var keywords = map[string]itemType{
	"and": itemAnd, "or": itemOr, "not": itemNot,
	"eq": itemEq, "ne": itemNe, "gt": itemGt, "ge": itemGe, "lt": itemLt, "le": itemLe,
	"true": itemTrue, "false": itemFalse,
	"NaN": itemNumber, "INF": itemNumber,
}

// item is a token: its type, byte offset and text.
type item struct {
	typ itemType
	pos int
	val string
}

// describe returns the item as an error message names it.
func (i item) describe() string {
	switch i.typ {
	case itemEOF:
		return "end of filter"
	case itemError:
		return i.val
	}
	v := i.val
	if len(v) > 40 {
		v = v[:40] + "…"
	}
	return fmt.Sprintf("%q", v)
}

// stateFn is a state of the lexer; it returns the next state, or nil once
// it has produced an item.
type stateFn func(*lexer) stateFn

// lexer holds the state of the scanner. It produces one item per call of
// nextItem, running state functions without a goroutine, in the manner of
// text/template/parse.
type lexer struct {
	input string
	start int  // start of the current item
	pos   int  // current position
	item  item // the item most recently produced
}

func lex(input string) *lexer { return &lexer{input: input} }

// nextItem returns the next item of the input.
func (l *lexer) nextItem() item {
	l.item = item{itemEOF, l.pos, ""}
	state := lexAny
	for state != nil {
		state = state(l)
	}
	return l.item
}

func (l *lexer) peek() byte {
	if l.pos < len(l.input) {
		return l.input[l.pos]
	}
	return 0
}

// emit produces an item of the text between start and pos.
func (l *lexer) emit(t itemType) stateFn {
	l.item = item{t, l.start, l.input[l.start:l.pos]}
	l.start = l.pos
	return nil
}

// errorf produces an error item at offset pos and stops the lexer.
func (l *lexer) errorf(pos int, format string, args ...any) stateFn {
	l.item = item{itemError, pos, fmt.Sprintf(format, args...)}
	l.start, l.pos = len(l.input), len(l.input)
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// identRune reports whether r may continue a property name.
func identRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// identStart reports whether r may start a property name.
func identStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

// identAt reports whether an identifier character starts at pos.
func (l *lexer) identAt(pos int) bool {
	if pos >= len(l.input) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(l.input[pos:])
	return identRune(r)
}

func lexAny(l *lexer) stateFn {
	for l.pos < len(l.input) && isSpace(l.input[l.pos]) {
		l.pos++
	}
	l.start = l.pos
	if l.pos >= len(l.input) {
		l.item = item{itemEOF, l.pos, ""}
		return nil
	}
	c := l.input[l.pos]
	switch {
	case c == '(':
		l.pos++
		return l.emit(itemLParen)
	case c == ')':
		l.pos++
		return l.emit(itemRParen)
	case c == '\'':
		return lexString
	case c == '-' || isDigit(c):
		return lexNumber
	}
	r, n := utf8.DecodeRuneInString(l.input[l.pos:])
	if r == utf8.RuneError && n == 1 {
		return l.errorf(l.pos, "invalid UTF-8 byte %#x", c)
	}
	if identStart(r) {
		return lexIdent
	}
	return l.errorf(l.pos, "unexpected character %q", r)
}

// lexString scans a quoted string, in which a doubled quote stands for one.
func lexString(l *lexer) stateFn {
	l.pos++ // opening quote
	for {
		i := strings.IndexByte(l.input[l.pos:], '\'')
		if i < 0 {
			return l.errorf(l.start, "unterminated string literal")
		}
		l.pos += i + 1
		if l.peek() != '\'' {
			return l.emit(itemString)
		}
		l.pos++ // escaped quote
	}
}

// lexNumber scans a numeric literal: [-]digits[.digits][(e|E)[+|-]digits]
// with an optional L/l (Int64) or d/D (Double) suffix, or -INF.
func lexNumber(l *lexer) stateFn {
	if l.peek() == '-' {
		l.pos++
		if strings.HasPrefix(l.input[l.pos:], "INF") && !l.identAt(l.pos+3) {
			l.pos += 3
			return l.emit(itemNumber)
		}
		if !isDigit(l.peek()) {
			return l.errorf(l.start, "expected digit after '-'")
		}
	}
	digits := func() int {
		n := 0
		for isDigit(l.peek()) {
			l.pos++
			n++
		}
		return n
	}
	digits()
	integer := true
	if l.peek() == '.' {
		l.pos++
		integer = false
		if digits() == 0 {
			return l.errorf(l.pos, "expected digit after '.' in number")
		}
	}
	if c := l.peek(); c == 'e' || c == 'E' {
		l.pos++
		integer = false
		if c := l.peek(); c == '+' || c == '-' {
			l.pos++
		}
		if digits() == 0 {
			return l.errorf(l.pos, "expected digit in exponent")
		}
	}
	switch c := l.peek(); c {
	case 'L', 'l':
		if !integer {
			return l.errorf(l.pos, "L suffix on a non-integer number")
		}
		l.pos++
	case 'd', 'D':
		l.pos++
	case 'f', 'F', 'm', 'M':
		return l.errorf(l.pos, "%c suffix: Single and Decimal literals are not supported", c)
	}
	if l.identAt(l.pos) {
		return l.errorf(l.pos, "unexpected character after number")
	}
	return l.emit(itemNumber)
}

// typePrefixes are the literal prefixes, matched case-insensitively.
var typePrefixes = map[string]itemType{
	"datetime": itemDateTime, "guid": itemGUID, "binary": itemBinary, "x": itemBinary,
}

// lexIdent scans a keyword, a property name, or a typed literal such as
// datetime'…'.
func lexIdent(l *lexer) stateFn {
	for l.pos < len(l.input) {
		r, n := utf8.DecodeRuneInString(l.input[l.pos:])
		if !identRune(r) {
			break
		}
		l.pos += n
	}
	word := l.input[l.start:l.pos]
	if t, ok := keywords[word]; ok {
		return l.emit(t)
	}
	if l.peek() == '\'' {
		t, ok := typePrefixes[strings.ToLower(word)]
		if !ok {
			return l.errorf(l.start, "unknown literal prefix %q", word)
		}
		l.pos++
		i := strings.IndexByte(l.input[l.pos:], '\'')
		if i < 0 {
			return l.errorf(l.start, "unterminated %s literal", word)
		}
		l.pos += i + 1
		return l.emit(t)
	}
	return l.emit(itemIdent)
}
