package filter

import (
	"fmt"
	"testing"
)

// Make the types prettyprint.
func (i item) String() string {
	switch i.typ {
	case itemEOF:
		return "EOF"
	case itemError:
		return fmt.Sprintf("error@%d:%s", i.pos, i.val)
	}
	return fmt.Sprintf("%s@%d:%q", i.typ, i.pos, i.val)
}

type lexTest struct {
	name  string
	input string
	items []item
}

func mk(typ itemType, pos int, val string) item { return item{typ, pos, val} }

func tEOF(pos int) item { return item{itemEOF, pos, ""} }

var lexTests = []lexTest{
	{"empty", "", []item{tEOF(0)}},
	{"spaces", " \t\r\n", []item{tEOF(4)}},
	{"comparison", "Age gt 30", []item{mk(itemIdent, 0, "Age"), mk(itemGt, 4, "gt"), mk(itemNumber, 7, "30"), tEOF(9)}},
	{"all operators", "eq ne gt ge lt le and or not", []item{
		mk(itemEq, 0, "eq"), mk(itemNe, 3, "ne"), mk(itemGt, 6, "gt"), mk(itemGe, 9, "ge"),
		mk(itemLt, 12, "lt"), mk(itemLe, 15, "le"), mk(itemAnd, 18, "and"), mk(itemOr, 22, "or"),
		mk(itemNot, 25, "not"), tEOF(28)}},
	{"keywords are case-sensitive", "EQ And True", []item{
		mk(itemIdent, 0, "EQ"), mk(itemIdent, 3, "And"), mk(itemIdent, 7, "True"), tEOF(11)}},
	{"parens", "((a))", []item{mk(itemLParen, 0, "("), mk(itemLParen, 1, "("), mk(itemIdent, 2, "a"),
		mk(itemRParen, 3, ")"), mk(itemRParen, 4, ")"), tEOF(5)}},
	{"bools", "true false", []item{mk(itemTrue, 0, "true"), mk(itemFalse, 5, "false"), tEOF(10)}},
	{"string", "'abc'", []item{mk(itemString, 0, "'abc'"), tEOF(5)}},
	{"empty string", "''", []item{mk(itemString, 0, "''"), tEOF(2)}},
	{"escaped quote", "'it''s'", []item{mk(itemString, 0, "'it''s'"), tEOF(7)}},
	{"only quotes", "''''", []item{mk(itemString, 0, "''''"), tEOF(4)}},
	{"string with spaces", "'a b' eq", []item{mk(itemString, 0, "'a b'"), mk(itemEq, 6, "eq"), tEOF(8)}},
	{"numbers", "42 -5 42L 7l 1.5 1e3 1.5E-3 2e+7 1.5d 3D 007", []item{
		mk(itemNumber, 0, "42"), mk(itemNumber, 3, "-5"), mk(itemNumber, 6, "42L"), mk(itemNumber, 10, "7l"),
		mk(itemNumber, 13, "1.5"), mk(itemNumber, 17, "1e3"), mk(itemNumber, 21, "1.5E-3"),
		mk(itemNumber, 28, "2e+7"), mk(itemNumber, 33, "1.5d"), mk(itemNumber, 38, "3D"),
		mk(itemNumber, 41, "007"), tEOF(44)}},
	{"special doubles", "NaN INF -INF", []item{mk(itemNumber, 0, "NaN"), mk(itemNumber, 4, "INF"),
		mk(itemNumber, 8, "-INF"), tEOF(12)}},
	{"number then paren", "(5)", []item{mk(itemLParen, 0, "("), mk(itemNumber, 1, "5"), mk(itemRParen, 2, ")"), tEOF(3)}},
	{"datetime", "datetime'2008-07-10T00:00:00Z'", []item{mk(itemDateTime, 0, "datetime'2008-07-10T00:00:00Z'"), tEOF(30)}},
	{"prefix case-insensitive", "DateTime'x' GUID'y'", []item{mk(itemDateTime, 0, "DateTime'x'"), mk(itemGUID, 12, "GUID'y'"), tEOF(19)}},
	{"guid", "guid'0f8fad5b-d9cb-469f-a165-70867728950e'", []item{mk(itemGUID, 0, "guid'0f8fad5b-d9cb-469f-a165-70867728950e'"), tEOF(42)}},
	{"binary", "X'0A' x'0b' binary'FF'", []item{mk(itemBinary, 0, "X'0A'"), mk(itemBinary, 6, "x'0b'"),
		mk(itemBinary, 12, "binary'FF'"), tEOF(22)}},
	{"X alone is a name", "X eq 1", []item{mk(itemIdent, 0, "X"), mk(itemEq, 2, "eq"), mk(itemNumber, 5, "1"), tEOF(6)}},
	{"underscore and digits", "_a1 b_2", []item{mk(itemIdent, 0, "_a1"), mk(itemIdent, 4, "b_2"), tEOF(7)}},
	{"unicode name", "Größe eq 1", []item{mk(itemIdent, 0, "Größe"), mk(itemEq, 8, "eq"), mk(itemNumber, 11, "1"), tEOF(12)}},
	{"no spaces needed around parens", "(a eq'x')", []item{mk(itemLParen, 0, "("), mk(itemIdent, 1, "a"),
		mk(itemEq, 3, "eq"), mk(itemString, 5, "'x'"), mk(itemRParen, 8, ")"), tEOF(9)}},

	// Errors.
	{"unterminated string", "a eq 'abc", []item{mk(itemIdent, 0, "a"), mk(itemEq, 2, "eq"), mk(itemError, 5, "unterminated string literal")}},
	{"unterminated escaped", "'it''", []item{mk(itemError, 0, "unterminated string literal")}},
	{"unterminated datetime", "datetime'2008", []item{mk(itemError, 0, "unterminated datetime literal")}},
	{"unknown prefix", "time'x'", []item{mk(itemError, 0, `unknown literal prefix "time"`)}},
	{"bad character", "a = 1", []item{mk(itemIdent, 0, "a"), mk(itemError, 2, `unexpected character '='`)}},
	{"lone minus", "- 5", []item{mk(itemError, 0, "expected digit after '-'")}},
	{"dot without digits", "1.", []item{mk(itemError, 2, "expected digit after '.' in number")}},
	{"leading dot", ".5", []item{mk(itemError, 0, "unexpected character '.'")}},
	{"exponent without digits", "1e", []item{mk(itemError, 2, "expected digit in exponent")}},
	{"L on double", "1.5L", []item{mk(itemError, 3, "L suffix on a non-integer number")}},
	{"decimal suffix", "1.5m", []item{mk(itemError, 3, "m suffix: Single and Decimal literals are not supported")}},
	{"letters after number", "42abc", []item{mk(itemError, 2, "unexpected character after number")}},
	{"invalid utf8", "a\xff", []item{mk(itemIdent, 0, "a"), mk(itemError, 1, "invalid UTF-8 byte 0xff")}},
	{"nan is a name", "nan inf", []item{mk(itemIdent, 0, "nan"), mk(itemIdent, 4, "inf"), tEOF(7)}},
}

func collect(input string) []item {
	l := lex(input)
	var items []item
	for {
		it := l.nextItem()
		items = append(items, it)
		if it.typ == itemEOF || it.typ == itemError {
			return items
		}
	}
}

func TestLex(t *testing.T) {
	for _, test := range lexTests {
		t.Run(test.name, func(t *testing.T) {
			items := collect(test.input)
			if fmt.Sprint(items) != fmt.Sprint(test.items) {
				t.Errorf("%q:\n got %v\nwant %v", test.input, items, test.items)
			}
		})
	}
}

// After an error the lexer only returns EOF.
func TestLexStopsAfterError(t *testing.T) {
	l := lex("'abc")
	if it := l.nextItem(); it.typ != itemError {
		t.Fatalf("got %v, want error", it)
	}
	if it := l.nextItem(); it.typ != itemEOF {
		t.Fatalf("after error got %v, want EOF", it)
	}
}
