package filter

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/keyenc"
)

// The planner works on positions in the table's key order. A point (pk, rk)
// is the position just before entity (pk, rk); +∞ is after every entity.
// Every Key bound has such a point that selects the same entities: the
// start of partition p is (p, ""), the position after entity (p, r) is
// (p, r+"\x00"), and the end of partition p is (p+"\x00", ""), since
// r+"\x00" and p+"\x00" are the next strings in ordinal order. With one
// canonical form per position, a span [lo, hi) is non-empty exactly when
// lo < hi, and unions and intersections are plain interval arithmetic.

// point is a position in key order.
type point struct {
	pk, rk string
	inf    bool // after every entity
}

func cmpPoint(a, b point) int {
	switch {
	case a.inf && b.inf:
		return 0
	case a.inf:
		return 1
	case b.inf:
		return -1
	}
	if c := keyenc.CompareUTF16(a.pk, b.pk); c != 0 {
		return c
	}
	return keyenc.CompareUTF16(a.rk, b.rk)
}

// span is the half-open interval [lo, hi) of positions.
type span struct{ lo, hi point }

// spans are sorted, disjoint, non-empty and non-adjacent. A set of spans
// over RowKeys alone uses points with pk "".
type spans []span

var full = spans{{hi: point{inf: true}}}

func isFull(s spans) bool {
	return len(s) == 1 && s[0].lo == (point{}) && s[0].hi.inf
}

// intersect returns the positions in both a and b, in one merge pass.
func intersect(a, b spans) spans {
	var out spans
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := a[i].lo, a[i].hi
		if cmpPoint(b[j].lo, lo) > 0 {
			lo = b[j].lo
		}
		if cmpPoint(b[j].hi, hi) < 0 {
			hi = b[j].hi
		}
		if cmpPoint(lo, hi) < 0 {
			out = append(out, span{lo, hi})
		}
		if cmpPoint(a[i].hi, b[j].hi) < 0 {
			i++
		} else {
			j++
		}
	}
	return out
}

// union returns the positions in a or b, merging overlapping and adjacent
// spans, in one merge pass.
func union(a, b spans) spans {
	out := make(spans, 0, len(a)+len(b))
	for i, j := 0, 0; i < len(a) || j < len(b); {
		var s span
		if j == len(b) || i < len(a) && cmpPoint(a[i].lo, b[j].lo) <= 0 {
			s = a[i]
			i++
		} else {
			s = b[j]
			j++
		}
		out = appendMerged(out, s)
	}
	return out
}

// appendMerged appends s to out, spans sorted by start, merging it into
// the last span where the two overlap or touch.
func appendMerged(out spans, s span) spans {
	if n := len(out); n > 0 && cmpPoint(s.lo, out[n-1].hi) <= 0 {
		if cmpPoint(s.hi, out[n-1].hi) > 0 {
			out[n-1].hi = s.hi
		}
		return out
	}
	return append(out, s)
}

// unionAll returns the union of the sets ss: their spans sorted by start
// (O(N log N) for N spans in all) and merged in one pass.
func unionAll(ss []spans) spans {
	n := 0
	for _, s := range ss {
		if isFull(s) {
			return full
		}
		n += len(s)
	}
	switch len(ss) {
	case 0:
		return nil
	case 1:
		return ss[0]
	case 2:
		return union(ss[0], ss[1])
	}
	all := make(spans, 0, n)
	for _, s := range ss {
		all = append(all, s...)
	}
	slices.SortFunc(all, func(x, y span) int { return cmpPoint(x.lo, y.lo) })
	out := all[:0]
	for _, s := range all {
		out = appendMerged(out, s)
	}
	return out
}

// intersectAll returns the intersection of the sets ss, intersected in
// pairs down a balanced tree: each level merges at most N spans, in
// log len(ss) levels. The full set, the identity, is skipped.
func intersectAll(ss []spans) spans {
	var rest []spans
	for _, s := range ss {
		switch {
		case len(s) == 0:
			return nil
		case !isFull(s):
			rest = append(rest, s)
		}
	}
	if len(rest) == 0 {
		return full
	}
	return intersectTree(rest)
}

func intersectTree(ss []spans) spans {
	if len(ss) == 1 {
		return ss[0]
	}
	m := len(ss) / 2
	return intersect(intersectTree(ss[:m]), intersectTree(ss[m:]))
}

// bounds returns the spans of strings x with "x op v", as points whose
// first component is x (partition) or, for rowKey, whose second is.
func bounds(op Op, v string, rowKey bool) spans {
	at := func(s string) point {
		if rowKey {
			return point{rk: s}
		}
		return point{pk: s}
	}
	lo, hi := point{}, point{inf: true}
	switch op {
	case OpEq:
		lo, hi = at(v), at(v+"\x00")
	case OpGe:
		lo = at(v)
	case OpGt:
		lo = at(v + "\x00")
	case OpLt:
		hi = at(v)
	case OpLe:
		hi = at(v + "\x00")
	default:
		return full
	}
	if cmpPoint(lo, hi) >= 0 {
		return nil
	}
	return spans{{lo, hi}}
}

// plan is what the planner knows of the entities an expression can match:
// their keys lie in keys, and their RowKeys in rows.
type plan struct {
	keys, rows spans
}

// maxNarrowGrowth bounds the spans that narrowing by RowKey may add to one
// filter's plan. Narrowing n single-partition spans by m RowKey spans can
// make n×m spans, as "(PartitionKey eq 'a' or …) and (RowKey eq '1' or
// …)" does; past this budget the spans are left whole, which still
// contains every match, so no filter can make planning quadratic.
const maxNarrowGrowth = 1 << 16

// planner computes plans. Each and and or node is planned with all the
// operands of its chain at once (a or b or c is one node of three), and
// sets are combined by merging sorted spans: planning takes O(n log n)
// comparisons in the number of comparisons n, times the nesting of and
// within or, which the parser bounds by MaxDepth.
type planner struct {
	budget int // spans that narrow may still add
}

func newPlanner() *planner { return &planner{budget: maxNarrowGrowth} }

// analyze computes a plan for x that covers every entity x matches.
func (pl *planner) analyze(x Expr) plan {
	switch x := x.(type) {
	case *Comparison:
		isPK := x.Property == localtable.PartitionKeyName
		isRK := x.Property == localtable.RowKeyName
		if !isPK && !isRK {
			return plan{full, full}
		}
		if x.Value.Kind() != localtable.KindString {
			return plan{} // a key is a string: this matches nothing
		}
		s := x.Value.String()
		if !utf8.ValidString(s) {
			return plan{full, full} // order of invalid UTF-8 is not the engine's
		}
		if isPK {
			return plan{bounds(x.Op, s, false), full}
		}
		return plan{full, bounds(x.Op, s, true)}
	case *Constant:
		if x.Value {
			return plan{full, full}
		}
		return plan{} // false: no key can match
	case *NotExpr:
		// not of a constant is the other constant, and a double negation
		// is its operand; other negations do not bound.
		switch y := x.X.(type) {
		case *Constant:
			return pl.analyze(&Constant{!y.Value})
		case *NotExpr:
			return pl.analyze(y.X)
		}
	case *AndExpr:
		ops := operands(x)
		keys, rows := make([]spans, len(ops)), make([]spans, len(ops))
		for i, op := range ops {
			p := pl.analyze(op)
			keys[i], rows[i] = p.keys, p.rows
		}
		return plan{intersectAll(keys), intersectAll(rows)}
	case *OrExpr:
		ops := operands(x)
		keys, rows := make([]spans, len(ops)), make([]spans, len(ops))
		for i, op := range ops {
			p := pl.analyze(op)
			keys[i], rows[i] = pl.narrow(p), p.rows
		}
		return plan{unionAll(keys), unionAll(rows)}
	}
	return plan{full, full} // not, and anything else
}

// operands returns the operands of the chain of and (or of or) nodes at
// x, left to right: those of "a and (b and c) and d" are a, b, c and d.
// It walks the chain without recursion, however deep it is.
func operands(x Expr) []Expr {
	var out []Expr
	stack := []Expr{x}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch y := e.(type) {
		case *AndExpr:
			if _, ok := x.(*AndExpr); ok {
				stack = append(stack, y.Right, y.Left)
				continue
			}
		case *OrExpr:
			if _, ok := x.(*OrExpr); ok {
				stack = append(stack, y.Right, y.Left)
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// narrow returns p.keys restricted by p.rows within every span that lies
// inside a single partition. Each such span is cut by the RowKey spans it
// overlaps, found by binary search. If that would add more spans than the
// planner's budget has left, p.keys is returned whole.
func (pl *planner) narrow(p plan) spans {
	if isFull(p.rows) || len(p.keys) == 0 {
		return p.keys
	}
	rows := p.rows
	// first[i] to last[i] are the RowKey spans that key span i overlaps;
	// first[i] < 0 marks a span across partitions, which is kept whole.
	first, last := make([]int, len(p.keys)), make([]int, len(p.keys))
	growth := 0
	for i, s := range p.keys {
		part := s.lo.pk
		toEnd := s.hi == point{pk: part + "\x00"}
		if s.hi.inf || (s.hi.pk != part && !toEnd) {
			first[i] = -1
			continue
		}
		lo := point{rk: s.lo.rk}
		first[i] = sort.Search(len(rows), func(k int) bool { return cmpPoint(rows[k].hi, lo) > 0 })
		last[i] = len(rows)
		if !toEnd {
			hi := point{rk: s.hi.rk}
			last[i] = sort.Search(len(rows), func(k int) bool { return cmpPoint(rows[k].lo, hi) >= 0 })
		}
		growth += max(last[i]-first[i]-1, 0)
	}
	if growth > pl.budget {
		return p.keys
	}
	pl.budget -= growth
	out := make(spans, 0, len(p.keys)+growth)
	for i, s := range p.keys {
		if first[i] < 0 {
			out = append(out, s)
			continue
		}
		part := s.lo.pk
		end := point{pk: part + "\x00"}
		for _, r := range rows[first[i]:max(last[i], first[i])] {
			lo, hi := point{pk: part, rk: r.lo.rk}, end
			if !r.hi.inf {
				hi = point{pk: part, rk: r.hi.rk}
			}
			if cmpPoint(s.lo, lo) > 0 {
				lo = s.lo
			}
			if cmpPoint(s.hi, hi) < 0 {
				hi = s.hi
			}
			out = append(out, span{lo, hi})
		}
	}
	return out
}

// KeyRanges returns sorted, disjoint, non-empty key ranges that contain
// every entity the filter matches; the whole filter remains to be checked
// with Match. ok is false when the filter does not bound the keys, and the
// whole table must be scanned. An empty result with ok true means nothing
// can match, as for "PartitionKey eq 5".
//
// PartitionKey comparisons (eq, gt, ge, lt, le) bound partitions; RowKey
// comparisons narrow the ranges that lie within one partition; and
// intersects, or unites; not, ne and other properties do not bound. The
// constant false plans no ranges, so a false conjunct empties the plan,
// and true plans a full scan; not of a constant is the other constant.
// A Filter that carries an error (see Err) plans no ranges.
//
// Planning takes O(n log n) time in the number of comparisons. Narrowing
// by RowKey can multiply ranges: "(PartitionKey eq 'a' or … 300 more) and
// (RowKey eq '1' or … 300 more)" is 90,000 points. Narrowing adds at
// most 65,536 ranges to one plan: where it would add more, it leaves the
// ranges whole, and the plan still contains every match, which Match then
// picks out.
func (f *Filter) KeyRanges() ([]localtable.KeyRange, bool) {
	if f == nil {
		return nil, false
	}
	f.planOnce.Do(f.makePlan)
	if !f.bounded {
		return nil, false
	}
	return slices.Clone(f.ranges), true
}

// makePlan computes the filter's key ranges once, and the conditions of
// its top-level and chain that they decide.
func (f *Filter) makePlan() {
	s, ok := f.plan()
	if !ok {
		return
	}
	f.bounded = true
	f.ranges = make([]localtable.KeyRange, len(s))
	for i, r := range s {
		f.ranges[i] = localtable.KeyRange{Start: toKey(r.lo), End: toKey(r.hi)}
	}
	if f.err == nil {
		f.inRanges, f.decided = residual(f.root, s), true
	}
}

// residual returns x without the operands of its top-level and chain
// (x itself if it is no and) that every key within s satisfies, nil if
// none remains. Dropping them keeps what x matches within s: each is true
// there.
func residual(x Expr, s spans) Expr {
	ops := []Expr{x}
	if _, ok := x.(*AndExpr); ok {
		ops = operands(x)
	}
	var keep []Expr
	for _, op := range ops {
		if !decides(s, op) {
			keep = append(keep, op)
		}
	}
	switch {
	case len(keep) == len(ops):
		return x
	case len(keep) == 0:
		return nil
	}
	out := keep[0]
	for _, op := range keep[1:] {
		out = &AndExpr{Left: out, Right: op}
	}
	return out
}

// decides reports whether every key within s satisfies x: x compares
// PartitionKey or RowKey (eq, gt, ge, lt, le) with a string, so the keys
// that satisfy it are exactly those of one span of positions (bounds), and
// each span of s lies within that span. For a RowKey comparison each span
// of s must also lie within one partition, where positions order as their
// RowKeys do.
func decides(s spans, x Expr) bool {
	c, ok := x.(*Comparison)
	if !ok || c.Value.Kind() != localtable.KindString {
		return false
	}
	isPK := c.Property == localtable.PartitionKeyName
	isRK := c.Property == localtable.RowKeyName
	v := c.Value.String()
	if !isPK && !isRK || !utf8.ValidString(v) {
		return false
	}
	switch c.Op {
	case OpEq, OpGt, OpGe, OpLt, OpLe:
	default:
		return false
	}
	b := bounds(c.Op, v, isRK)
	if len(b) != 1 {
		return false
	}
	in := b[0]
	for _, r := range s {
		lo, hi := r.lo, r.hi
		if isRK {
			// The RowKeys of r, if it lies within one partition.
			part := r.lo.pk
			switch {
			case !hi.inf && hi.pk == part:
				hi = point{rk: hi.rk}
			case hi == point{pk: part + "\x00"}:
				hi = point{inf: true}
			default:
				return false
			}
			lo = point{rk: lo.rk}
		}
		if cmpPoint(lo, in.lo) < 0 || cmpPoint(hi, in.hi) > 0 {
			return false
		}
	}
	return true
}

func (f *Filter) plan() (spans, bool) {
	switch {
	case f == nil:
		return nil, false
	case f.err != nil:
		return nil, true // it matches nothing
	}
	pl := newPlanner()
	s := pl.narrow(pl.analyze(f.root))
	if isFull(s) {
		return nil, false
	}
	return s, true
}

// keyForm names the Key constructor that gives a point's position.
func keyForm(p point) (form, pk, rk string) {
	switch {
	case p.inf || p == (point{}):
		return "", "", ""
	case p.rk == "" && strings.HasSuffix(p.pk, "\x00"):
		return "PartitionEnd", p.pk[:len(p.pk)-1], ""
	case p.rk == "":
		return "PartitionStart", p.pk, ""
	case strings.HasSuffix(p.rk, "\x00"):
		return "KeyAfter", p.pk, p.rk[:len(p.rk)-1]
	}
	return "KeyAt", p.pk, p.rk
}

func toKey(p point) localtable.Key {
	form, pk, rk := keyForm(p)
	switch form {
	case "PartitionEnd":
		return localtable.PartitionEnd(pk)
	case "PartitionStart":
		return localtable.PartitionStart(pk)
	case "KeyAfter":
		return localtable.KeyAfter(pk, rk)
	case "KeyAt":
		return localtable.KeyAt(pk, rk)
	}
	return localtable.Key{}
}

func describePoint(p point, start bool) string {
	form, pk, rk := keyForm(p)
	switch form {
	case "":
		if start {
			return "start of table"
		}
		return "end of table"
	case "PartitionEnd", "PartitionStart":
		return fmt.Sprintf("%s(%s)", form, Literal(localtable.StringValue(pk)))
	}
	return fmt.Sprintf("%s(%s, %s)", form, Literal(localtable.StringValue(pk)), Literal(localtable.StringValue(rk)))
}

// Explain returns a human-readable query plan: the key ranges to scan, with
// their bounds named by the localtable.Key constructor that makes them, or
// "full scan", followed by the residual filter that the query checks on
// each entity it scans: the filter, less the comparisons of PartitionKey
// and RowKey in its top-level and chain that the ranges decide (see
// MatchInRanges). For a Filter that carries an error (see Err) it returns
// "invalid filter: " and the error.
func (f *Filter) Explain() string {
	if err := f.Err(); err != nil {
		return "invalid filter: " + err.Error()
	}
	var b strings.Builder
	s, ok := f.plan()
	switch {
	case !ok:
		b.WriteString("full scan\n")
	case len(s) == 0:
		b.WriteString("no ranges: nothing can match\n")
	default:
		fmt.Fprintf(&b, "%d key range", len(s))
		if len(s) > 1 {
			b.WriteByte('s')
		}
		b.WriteString(":\n")
		for _, r := range s {
			fmt.Fprintf(&b, "  [%s, %s)\n", describePoint(r.lo, true), describePoint(r.hi, false))
		}
	}
	switch {
	case f == nil:
		b.WriteString("residual: none")
	case ok && len(s) > 0:
		// A scan of the ranges checks what they do not decide.
		f.planOnce.Do(f.makePlan)
		if f.inRanges == nil {
			b.WriteString("residual: none")
		} else {
			b.WriteString("residual: " + f.inRanges.String())
		}
	default:
		b.WriteString("residual: " + f.String())
	}
	return b.String()
}
