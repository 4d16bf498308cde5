package tests

import (
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/edmfmt"
)

// The filter generator and the reference evaluator of the differential
// test: filters are generated as text together with a tree of what they
// mean, and refMatch evaluates that tree by the rules of filter/doc.go,
// independently of package filter.

type filterGen struct {
	r     *rand.Rand
	ents  []localtable.Entity // the table, read back (with Timestamps)
	cmps  int                 // comparisons written in the current filter
	names []string            // every property name, for Select
}

var diffOps = []string{"eq", "ne", "gt", "ge", "lt", "le"}

// lit is a literal's text and the value it denotes.
type lit struct {
	text string
	v    localtable.Value
}

// filter returns a random filter: some key-bounded, the rest from the
// general grammar.
func (g *filterGen) filter() (string, refExpr) {
	g.cmps = 0
	switch g.r.IntN(10) {
	case 0:
		return g.keyBounded()
	case 1:
		// A union of key-bounded conjunctions: several ranges.
		s, x := g.keyBounded()
		s = "(" + s + ")"
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			s2, x2 := g.keyBounded()
			s, x = s+" or ("+s2+")", refOr(x, x2)
		}
		return s, x
	case 2:
		s, x := g.keyBounded()
		s2, x2 := g.andOperand(2)
		return s + " and " + s2, refAnd(x, x2)
	case 3:
		// Key bounds joined with a Boolean literal: "true and" keeps the
		// bounds, "and false" empties the plan, "false or" is the form of
		// .NET's predicate builders.
		s, x := g.keyBounded()
		c, cx := g.constant()
		switch g.r.IntN(3) {
		case 0:
			return c + " and " + s, refAnd(cx, x)
		case 1:
			return s + " and " + c, refAnd(x, cx)
		}
		s2, x2 := g.keyBounded()
		return c + " or (" + s + ") or (" + s2 + ")", refOr(refOr(cx, x), x2)
	}
	return g.expr(4)
}

// keyBounded returns "PartitionKey eq pk" and up to three RowKey
// comparisons, in random order, either operand first.
func (g *filterGen) keyBounded() (string, refExpr) {
	conj := []string{}
	xs := []refExpr{}
	add := func(s string, x refExpr) { conj, xs = append(conj, s), append(xs, x) }
	add(g.cmpText("PartitionKey", "eq", g.keyLit(true, true)))
	for n := g.r.IntN(4); n > 0; n-- {
		add(g.cmpText("RowKey", pick(g.r, []string{"eq", "gt", "ge", "lt", "le"}), g.keyLit(false, true)))
	}
	g.r.Shuffle(len(conj), func(i, j int) { conj[i], conj[j], xs[i], xs[j] = conj[j], conj[i], xs[j], xs[i] })
	x := xs[0]
	for _, y := range xs[1:] {
		x = refAnd(x, y)
	}
	return strings.Join(conj, " and "), x
}

func (g *filterGen) expr(depth int) (string, refExpr) {
	if depth <= 0 || g.cmps >= 12 || g.r.IntN(4) == 0 {
		return g.cmp()
	}
	switch g.r.IntN(7) {
	case 0, 1:
		s1, x1 := g.andOperand(depth - 1)
		s2, x2 := g.andOperand(depth - 1)
		return s1 + " and " + s2, refAnd(x1, x2)
	case 2, 3:
		s1, x1 := g.orOperand(depth - 1)
		s2, x2 := g.orOperand(depth - 1)
		return s1 + " or " + s2, refOr(x1, x2)
	case 4:
		if g.r.IntN(3) == 0 {
			g.cmps++
			p := pick(g.r, []string{"B", "M", "Nope"})
			return "not " + p, refNot(refCmp(p, "eq", localtable.BoolValue(true)))
		}
		if g.r.IntN(4) == 0 {
			c, cx := g.constant()
			return "not " + c, refNot(cx)
		}
		s, x := g.expr(depth - 1)
		return "not (" + s + ")", refNot(x)
	case 5:
		s, x := g.expr(depth - 1)
		return "not not (" + s + ")", refNot(refNot(x))
	}
	s, x := g.expr(depth - 1)
	return "(" + s + ")", x
}

// orOperand is an operand of or, parenthesized or not: and binds tighter,
// and or is associative.
func (g *filterGen) orOperand(depth int) (string, refExpr) {
	s, x := g.expr(depth)
	if g.r.IntN(2) == 0 {
		s = "(" + s + ")"
	}
	return s, x
}

// andOperand is an operand of and: an or in it needs parentheses.
func (g *filterGen) andOperand(depth int) (string, refExpr) {
	s, x := g.expr(depth)
	if x.op == "or" || g.r.IntN(2) == 0 {
		s = "(" + s + ")"
	}
	return s, x
}

// cmpText writes "prop op lit", or "lit op' prop" with the mirrored
// operator.
func (g *filterGen) cmpText(prop, op string, l lit) (string, refExpr) {
	g.cmps++
	if g.r.IntN(5) == 0 {
		flip := map[string]string{"eq": "eq", "ne": "ne", "gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}
		return l.text + " " + flip[op] + " " + prop, refCmp(prop, op, l.v)
	}
	return prop + " " + op + " " + l.text, refCmp(prop, op, l.v)
}

// cmp returns one comparison on a key, Timestamp, a custom property or a
// missing one, or a bare Boolean property.
func (g *filterGen) cmp() (string, refExpr) {
	op := pick(g.r, diffOps)
	switch n := g.r.IntN(100); {
	case n < 25:
		return g.cmpText("PartitionKey", op, g.keyLit(true, false))
	case n < 50:
		return g.cmpText("RowKey", op, g.keyLit(false, false))
	case n < 57:
		var l lit
		if g.r.IntN(8) == 0 {
			l = g.literal(pick(g.r, allKinds))
		} else {
			t := pick(g.r, g.ents).Timestamp
			l = g.dateTimeLit(localtable.TimeToTicks(t) + int64(g.r.IntN(3)-1))
		}
		return g.cmpText("Timestamp", op, l)
	case n < 60:
		return g.cmpText("Nope", op, g.literal(pick(g.r, allKinds)))
	case n < 65:
		g.cmps++
		p := pick(g.r, []string{"B", "M", "D"}) // a bare property: "B eq true"
		return p, refCmp(p, "eq", localtable.BoolValue(true))
	case n < 69:
		return g.constant()
	}
	p := pick(g.r, diffProps)
	k := pick(g.r, p.kinds)
	if g.r.IntN(4) == 0 {
		k = pick(g.r, allKinds)
	}
	return g.cmpText(p.name, op, g.literal(k))
}

// constant returns a bare Boolean literal, sometimes parenthesized. It
// is not a comparison, so it does not count.
func (g *filterGen) constant() (string, refExpr) {
	v := g.r.IntN(2) == 0
	s := strconv.FormatBool(v)
	if g.r.IntN(4) == 0 {
		s = "(" + s + ")"
	}
	return s, refConst(v)
}

// keyLitRunes extend keys in literals: besides diffRunes, characters keys
// may not hold (U+0000, '/', U+007F) and the edges of the UTF-16 order.
var keyLitRunes = append([]rune{0, 1, '/', '\u007f', '\ud7ff', '\uffff', '\U0010ffff'}, diffRunes...)

// keyLit returns a literal to compare a key with: mostly a string near the
// keys of the data (a key, a prefix of one, one extended by a character, a
// random string), sometimes a literal of another type, which matches
// nothing. With stringOnly it is always a string.
func (g *filterGen) keyLit(partition, stringOnly bool) lit {
	if !stringOnly && g.r.IntN(12) == 0 {
		return g.literal(pick(g.r, allKinds[1:]))
	}
	e := pick(g.r, g.ents)
	k := e.RowKey
	if partition {
		k = e.PartitionKey
	}
	switch g.r.IntN(6) {
	case 0:
		rs := []rune(k)
		k = string(rs[:g.r.IntN(len(rs)+1)])
	case 1:
		k += string(pick(g.r, keyLitRunes))
	case 2:
		k = randString(g.r, 0, 3)
	}
	return stringLit(k)
}

func stringLit(s string) lit {
	return lit{"'" + strings.ReplaceAll(s, "'", "''") + "'", localtable.StringValue(s)}
}

// literal returns a random literal of kind k, in a random one of its forms.
func (g *filterGen) literal(k localtable.Kind) lit {
	r := g.r
	switch k {
	case localtable.KindString:
		return stringLit(randString(r, 0, 3))
	case localtable.KindInt32:
		v := pick(r, diffInt32s)
		if r.IntN(4) == 0 {
			v = int32(r.IntN(7) - 3)
		}
		return lit{strconv.Itoa(int(v)), localtable.Int32Value(v)}
	case localtable.KindInt64:
		v := pick(r, diffInt64s)
		return lit{strconv.FormatInt(v, 10) + pick(r, []string{"L", "l"}), localtable.Int64Value(v)}
	case localtable.KindDouble:
		return doubleLit(r, pick(r, diffDoubles))
	case localtable.KindBool:
		v := r.IntN(2) == 0
		return lit{strconv.FormatBool(v), localtable.BoolValue(v)}
	case localtable.KindDateTime:
		t := pick(r, diffTimes)
		if r.IntN(3) == 0 && t < diffBase+10 {
			t += int64(r.IntN(3) - 1)
		}
		return g.dateTimeLit(t)
	case localtable.KindGUID:
		v := pick(r, diffGUIDs)
		s := v.String()
		if r.IntN(2) == 0 {
			s = strings.ToUpper(s)
		}
		return lit{pick(r, []string{"guid", "GUID", "Guid"}) + "'" + s + "'", localtable.GUIDValue(v)}
	case localtable.KindBinary:
		v := pick(r, diffBinaries)
		s := hex.EncodeToString(v)
		if r.IntN(2) == 0 {
			s = strings.ToUpper(s)
		}
		return lit{pick(r, []string{"X", "x", "binary", "Binary"}) + "'" + s + "'", localtable.BinaryValue(v)}
	}
	panic("literal: " + k.String())
}

// doubleLit writes f as a Double literal: NaN, INF, -INF, or digits with
// a '.', an exponent or a d suffix.
func doubleLit(r *rand.Rand, f float64) lit {
	v := localtable.DoubleValue(f)
	switch {
	case math.IsNaN(f):
		return lit{"NaN", v}
	case math.IsInf(f, 1):
		return lit{"INF", v}
	case math.IsInf(f, -1):
		return lit{"-INF", v}
	}
	switch r.IntN(4) {
	case 0:
		return lit{strconv.FormatFloat(f, 'E', -1, 64), v}
	case 1:
		return lit{strconv.FormatFloat(f, 'g', -1, 64) + pick(r, []string{"d", "D"}), v}
	case 2:
		// Four significant digits: a nearby value.
		s := strconv.FormatFloat(f, 'e', 3, 64)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			panic(err)
		}
		return lit{s, localtable.DoubleValue(f)}
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return lit{s, v}
}

// dateTimeLit writes ticks as a datetime literal: 7 or trimmed fractional
// digits, Z, no zone, or an offset, and seconds omitted when zero.
func (g *filterGen) dateTimeLit(ticks int64) lit {
	r := g.r
	t := localtable.TicksToTime(ticks)
	var body string
	switch r.IntN(5) {
	case 0:
		body = edmfmt.DateTime7(t)
	case 1:
		body = strings.TrimSuffix(edmfmt.DateTime(t), "Z")
	case 2:
		if y := t.Year(); y > 1601 && y < 9999 {
			zone := time.FixedZone("", pick(r, []int{2 * 3600, -(5*3600 + 30*60), 14 * 3600}))
			body = t.In(zone).Format("2006-01-02T15:04:05.9999999-07:00")
			break
		}
		fallthrough
	case 3:
		if t.Second() == 0 && t.Nanosecond() == 0 {
			body = t.Format("2006-01-02T15:04Z")
			break
		}
		fallthrough
	default:
		body = edmfmt.DateTime(t)
	}
	return lit{pick(r, []string{"datetime", "DateTime", "DATETIME"}) + "'" + body + "'", localtable.DateTimeTicksValue(ticks)}
}

// refExpr is the generator's own tree of a filter, evaluated by refMatch:
// a second implementation of the typed semantics of package filter's
// documentation, independent of its parser and evaluator.
type refExpr struct {
	op   string // "and", "or", "not", or a comparison operator
	x, y *refExpr
	prop string
	v    localtable.Value
}

func refAnd(x, y refExpr) refExpr { return refExpr{op: "and", x: &x, y: &y} }
func refOr(x, y refExpr) refExpr  { return refExpr{op: "or", x: &x, y: &y} }
func refNot(x refExpr) refExpr    { return refExpr{op: "not", x: &x} }
func refConst(v bool) refExpr     { return refExpr{op: strconv.FormatBool(v)} }
func refCmp(prop, op string, v localtable.Value) refExpr {
	return refExpr{op: op, prop: prop, v: v}
}

func refMatch(x *refExpr, e *localtable.Entity) bool {
	switch x.op {
	case "and":
		return refMatch(x.x, e) && refMatch(x.y, e)
	case "or":
		return refMatch(x.x, e) || refMatch(x.y, e)
	case "not":
		return !refMatch(x.x, e)
	case "true":
		return true
	case "false":
		return false
	}
	var p localtable.Value
	switch x.prop {
	case "PartitionKey":
		p = localtable.StringValue(e.PartitionKey)
	case "RowKey":
		p = localtable.StringValue(e.RowKey)
	case "Timestamp":
		p = localtable.DateTimeValue(e.Timestamp)
	default:
		v, ok := e.Properties[x.prop]
		if !ok {
			return false // absent: false, ne included
		}
		p = v
	}
	l := x.v
	// c is the three-way comparison; nan marks an unordered pair.
	var c int
	nan := false
	switch {
	case p.Kind() == localtable.KindDouble && (l.Kind() == localtable.KindDouble || l.Kind() == localtable.KindInt32):
		a := p.Double()
		var b float64
		if l.Kind() == localtable.KindInt32 {
			b = float64(l.Int32())
		} else {
			b = l.Double()
		}
		switch {
		case math.IsNaN(a) || math.IsNaN(b):
			nan = true
		case a < b:
			c = -1
		case a > b:
			c = 1
		}
	case p.Kind() == localtable.KindInt64 && l.Kind() == localtable.KindInt32:
		c = cmpInt(p.Int64(), int64(l.Int32()))
	case p.Kind() != l.Kind():
		return false // different types never compare
	case p.Kind() == localtable.KindString:
		c = compareUTF16(p.String(), l.String())
	case p.Kind() == localtable.KindInt32:
		c = cmpInt(int64(p.Int32()), int64(l.Int32()))
	case p.Kind() == localtable.KindInt64:
		c = cmpInt(p.Int64(), l.Int64())
	case p.Kind() == localtable.KindBool:
		c = cmpInt(boolInt(p.Bool()), boolInt(l.Bool()))
	case p.Kind() == localtable.KindDateTime:
		c = cmpInt(p.Ticks(), l.Ticks())
	case p.Kind() == localtable.KindGUID:
		c = strings.Compare(p.GUID().String(), l.GUID().String())
	case p.Kind() == localtable.KindBinary:
		c = strings.Compare(string(p.Binary()), string(l.Binary()))
	}
	if nan {
		return x.op == "ne"
	}
	switch x.op {
	case "eq":
		return c == 0
	case "ne":
		return c != 0
	case "gt":
		return c > 0
	case "ge":
		return c >= 0
	case "lt":
		return c < 0
	case "le":
		return c <= 0
	}
	panic("refMatch: " + x.op)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// countComparisons counts the comparisons of a syntax tree.
func countComparisons(x filter.Expr) int {
	switch x := x.(type) {
	case *filter.AndExpr:
		return countComparisons(x.Left) + countComparisons(x.Right)
	case *filter.OrExpr:
		return countComparisons(x.Left) + countComparisons(x.Right)
	case *filter.NotExpr:
		return countComparisons(x.X)
	case *filter.Constant:
		return 0
	}
	return 1
}

// hasConstant reports whether x holds a bare true or false.
func hasConstant(x filter.Expr) bool {
	switch x := x.(type) {
	case *filter.Constant:
		return true
	case *filter.AndExpr:
		return hasConstant(x.Left) || hasConstant(x.Right)
	case *filter.OrExpr:
		return hasConstant(x.Left) || hasConstant(x.Right)
	case *filter.NotExpr:
		return hasConstant(x.X)
	}
	return false
}

// keyExact reports whether the planner's ranges hold exactly the entities
// x matches: x is a conjunction of PartitionKey eq and RowKey range
// comparisons with strings, or a union of those.
func keyExact(x filter.Expr) bool {
	if o, ok := x.(*filter.OrExpr); ok {
		return keyExact(o.Left) && keyExact(o.Right)
	}
	var leaves []*filter.Comparison
	var walk func(filter.Expr) bool
	walk = func(x filter.Expr) bool {
		switch x := x.(type) {
		case *filter.AndExpr:
			return walk(x.Left) && walk(x.Right)
		case *filter.Comparison:
			leaves = append(leaves, x)
			return true
		}
		return false
	}
	if !walk(x) {
		return false
	}
	pkEq := false
	for _, c := range leaves {
		if c.Value.Kind() != localtable.KindString || c.Op == filter.OpNe {
			return false
		}
		switch c.Property {
		case localtable.PartitionKeyName:
			if c.Op != filter.OpEq {
				return false
			}
			pkEq = true
		case localtable.RowKeyName:
		default:
			return false
		}
	}
	return pkEq
}

// loadDiffTable writes es to a new table on eng, in transactions and
// single writes, with a clock that stands still so that Timestamps are
// 100 ns apart, and returns the table and its entities read back in key
// order.

// indexFilter returns a filter that an index on one property can serve:
// a comparison of it, a range of it, an or of eq on it, or an eq on it
// and a random expression; sometimes within key bounds too.
func (g *filterGen) indexFilter() (string, refExpr) {
	g.cmps = 0
	p := pick(g.r, diffProps)
	lit := func() lit {
		k := pick(g.r, p.kinds)
		if g.r.IntN(4) == 0 {
			k = pick(g.r, allKinds)
		}
		return g.literal(k)
	}
	var s string
	var x refExpr
	switch g.r.IntN(4) {
	case 0:
		s, x = g.cmpText(p.name, pick(g.r, []string{"eq", "gt", "ge", "lt", "le"}), lit())
	case 1:
		s1, x1 := g.cmpText(p.name, pick(g.r, []string{"gt", "ge"}), lit())
		s2, x2 := g.cmpText(p.name, pick(g.r, []string{"lt", "le"}), lit())
		s, x = s1+" and "+s2, refAnd(x1, x2)
	case 2:
		s, x = g.cmpText(p.name, "eq", lit())
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			s2, x2 := g.cmpText(p.name, "eq", lit())
			s, x = s+" or "+s2, refOr(x, x2)
		}
		s = "(" + s + ")"
	default:
		s1, x1 := g.cmpText(p.name, "eq", lit())
		s2, x2 := g.andOperand(2)
		s, x = s1+" and "+s2, refAnd(x1, x2)
	}
	if g.r.IntN(4) == 0 {
		k, kx := g.keyBounded()
		s, x = k+" and ("+s+")", refAnd(kx, x)
	}
	return s, x
}
