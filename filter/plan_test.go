package filter_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

type kr = localtable.KeyRange

var (
	pStart = localtable.PartitionStart
	pEnd   = localtable.PartitionEnd
	at     = localtable.KeyAt
	after  = localtable.KeyAfter
	inf    = localtable.Key{}
)

func rg(s, e localtable.Key) kr { return kr{Start: s, End: e} }

func sameRanges(a, b []kr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Start.Compare(b[i].Start) != 0 || a[i].End.Compare(b[i].End) != 0 ||
			a[i].Start.IsZero() != b[i].Start.IsZero() || a[i].End.IsZero() != b[i].End.IsZero() {
			return false
		}
	}
	return true
}

func TestKeyRanges(t *testing.T) {
	tests := []struct {
		f    string
		want []kr // nil with ok false: full scan
	}{
		{"PartitionKey eq 'x'", []kr{rg(pStart("x"), pEnd("x"))}},
		{"'x' eq PartitionKey", []kr{rg(pStart("x"), pEnd("x"))}},
		{"PartitionKey eq 'x' and RowKey eq 'r'", []kr{rg(at("x", "r"), after("x", "r"))}},
		{"PartitionKey eq 'x' and RowKey ge 'a'", []kr{rg(at("x", "a"), pEnd("x"))}},
		{"PartitionKey eq 'x' and RowKey gt 'a'", []kr{rg(after("x", "a"), pEnd("x"))}},
		{"PartitionKey eq 'x' and RowKey lt 'm'", []kr{rg(pStart("x"), at("x", "m"))}},
		{"PartitionKey eq 'x' and RowKey le 'm'", []kr{rg(pStart("x"), after("x", "m"))}},
		{"RowKey ge 'a' and PartitionKey eq 'x' and RowKey lt 'm'", []kr{rg(at("x", "a"), at("x", "m"))}},
		{"PartitionKey eq 'x' and 'm' ge RowKey and Age gt 3", []kr{rg(pStart("x"), after("x", "m"))}},
		{"PartitionKey ge 'a'", []kr{rg(pStart("a"), inf)}},
		{"PartitionKey gt 'a'", []kr{rg(pEnd("a"), inf)}},
		{"PartitionKey lt 'm'", []kr{rg(inf, pStart("m"))}},
		{"PartitionKey le 'm'", []kr{rg(inf, pEnd("m"))}},
		{"PartitionKey ge 'a' and PartitionKey lt 'b'", []kr{rg(pStart("a"), pStart("b"))}},
		{"PartitionKey eq 'a' or PartitionKey eq 'b'", []kr{rg(pStart("a"), pEnd("a")), rg(pStart("b"), pEnd("b"))}},
		{"PartitionKey eq 'b' or PartitionKey eq 'a' or PartitionKey eq 'b'", []kr{rg(pStart("a"), pEnd("a")), rg(pStart("b"), pEnd("b"))}},
		// Adjacent ranges merge: [a, a\0) ∪ [a\0, …).
		{"PartitionKey eq 'a' or PartitionKey gt 'a'", []kr{rg(pStart("a"), inf)}},
		{"PartitionKey le 'a' or PartitionKey gt 'a'", nil},
		{"(PartitionKey eq 'a' or PartitionKey eq 'b') and RowKey eq 'r'", []kr{rg(at("a", "r"), after("a", "r")), rg(at("b", "r"), after("b", "r"))}},
		{"PartitionKey eq 'a' and (RowKey eq '5' or RowKey eq '1')", []kr{rg(at("a", "1"), after("a", "1")), rg(at("a", "5"), after("a", "5"))}},
		{"(PartitionKey eq 'a' and RowKey eq '1') or (PartitionKey eq 'b' and RowKey ge '2')", []kr{rg(at("a", "1"), after("a", "1")), rg(at("b", "2"), pEnd("b"))}},
		// RowKey bounds do not narrow ranges that span partitions.
		{"PartitionKey ge 'a' and RowKey eq 'r'", []kr{rg(pStart("a"), inf)}},
		// Contradictions and type mismatches match nothing.
		{"PartitionKey eq 'a' and PartitionKey eq 'b'", []kr{}},
		{"PartitionKey eq 'a' and RowKey lt ''", []kr{}},
		{"PartitionKey eq 1", []kr{}},
		{"RowKey eq 1L and Age gt 3", []kr{}},
		{"PartitionKey lt ''", []kr{}},
		{"PartitionKey eq 'a' or PartitionKey eq 1", []kr{rg(pStart("a"), pEnd("a"))}},
		// Boolean literals: false plans nothing, true bounds nothing, and
		// not of a constant is the other constant.
		{"false", []kr{}},
		{"not true", []kr{}},
		{"not not false", []kr{}},
		{"true", nil},
		{"not false", nil},
		{"(true)", nil},
		{"PartitionKey eq 'a' and false", []kr{}},
		{"false and Age gt 3", []kr{}},
		{"PartitionKey eq 'a' and not true", []kr{}},
		{"true and PartitionKey eq 'a'", []kr{rg(pStart("a"), pEnd("a"))}},
		{"PartitionKey eq 'a' and not false and RowKey ge 'm'", []kr{rg(at("a", "m"), pEnd("a"))}},
		{"false or PartitionKey eq 'a'", []kr{rg(pStart("a"), pEnd("a"))}},
		{"(false or PartitionKey eq 'a' or PartitionKey eq 'b') and RowKey eq 'r'", []kr{rg(at("a", "r"), after("a", "r")), rg(at("b", "r"), after("b", "r"))}},
		{"PartitionKey eq 'a' or false and Age gt 3", []kr{rg(pStart("a"), pEnd("a"))}},
		{"true or PartitionKey eq 'a'", nil},
		{"PartitionKey eq 'a' or true", nil},
		{"not not (PartitionKey eq 'a')", []kr{rg(pStart("a"), pEnd("a"))}},
		// Unbounded shapes.
		{"Age gt 3", nil},
		{"RowKey eq 'r'", nil},
		{"PartitionKey ne 'a'", nil},
		{"not (PartitionKey eq 'a')", nil},
		{"PartitionKey eq 'a' or Age gt 3", nil},
		{"PartitionKey ge ''", nil},
		// And with an unbounded side keeps the bounded one.
		{"PartitionKey eq 'a' and not (RowKey eq 'r')", []kr{rg(pStart("a"), pEnd("a"))}},
		{"PartitionKey eq '' and RowKey lt 'b'", []kr{rg(inf, at("", "b"))}},
	}
	for _, test := range tests {
		f, err := filter.Parse(test.f)
		if err != nil {
			t.Fatalf("Parse(%q): %v", test.f, err)
		}
		got, ok := f.KeyRanges()
		if ok != (test.want != nil) || !sameRanges(got, test.want) {
			t.Errorf("%s:\n got %v ok=%v\nwant %v\n%s", test.f, got, ok, test.want, f.Explain())
		}
		if ok {
			checkRanges(t, f, got)
		}
	}
}

func checkRanges(t *testing.T, f *filter.Filter, rs []kr) {
	t.Helper()
	for i, r := range rs {
		if r.Empty() {
			t.Errorf("%s: range %d empty", f, i)
		}
		if i > 0 && !r.Start.IsZero() && r.Start.Compare(rs[i-1].End) < 0 || i > 0 && (r.Start.IsZero() || rs[i-1].End.IsZero()) {
			t.Errorf("%s: ranges %d and %d overlap or are unsorted", f, i-1, i)
		}
	}
}

func TestExplain(t *testing.T) {
	tests := []struct{ f, want string }{
		{"PartitionKey eq 'it''s' and RowKey le 'm'", "1 key range:\n  [PartitionStart('it''s'), KeyAfter('it''s', 'm'))\nresidual: none"},
		{"PartitionKey eq 'p' and Age gt 3 and RowKey ge 'a'", "1 key range:\n  [KeyAt('p', 'a'), PartitionEnd('p'))\nresidual: Age gt 3"},
		{"PartitionKey ge 'a' and RowKey ge 'b' and Age gt 3", "1 key range:\n  [PartitionStart('a'), end of table)\nresidual: RowKey ge 'b' and Age gt 3"},
		{"Age gt 3", "full scan\nresidual: Age gt 3"},
		{"PartitionKey eq 3", "no ranges: nothing can match\nresidual: PartitionKey eq 3"},
		{"false or Age gt 3 and false", "no ranges: nothing can match\nresidual: false or Age gt 3 and false"},
		{"not false", "full scan\nresidual: not false"},
		{"PartitionKey lt 'a' or PartitionKey gt 'b'", "2 key ranges:\n  [start of table, PartitionStart('a'))\n  [PartitionEnd('b'), end of table)\nresidual: PartitionKey lt 'a' or PartitionKey gt 'b'"},
	}
	for _, test := range tests {
		f, err := filter.Parse(test.f)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Explain(); got != test.want {
			t.Errorf("%s:\n got %q\nwant %q", test.f, got, test.want)
		}
	}
}

// Random filters and entities, for the property tests.

var keyPool = []string{"", "a", "a\x00", "ab", "b", "m", "z", "\uD7FF", "\U00010000", "\uE000", "\uFFFF", "it's"}

type gen struct{ r *rand.Rand }

func (g gen) key() string {
	s := keyPool[g.r.IntN(len(keyPool))]
	if g.r.IntN(4) == 0 {
		s += keyPool[g.r.IntN(len(keyPool))]
	}
	return s
}

func (g gen) value() localtable.Value {
	switch g.r.IntN(9) {
	case 0:
		return localtable.Int32Value(int32(g.r.IntN(7) - 3))
	case 1:
		return localtable.Int64Value(int64(g.r.IntN(7) - 3))
	case 2:
		return localtable.DoubleValue(float64(g.r.IntN(13)-6) / 2)
	case 3:
		return localtable.BoolValue(g.r.IntN(2) == 0)
	case 4:
		return localtable.DateTimeTicksValue(int64(g.r.IntN(5)))
	case 5:
		var u localtable.GUID
		u[g.r.IntN(16)] = byte(g.r.IntN(3))
		return localtable.GUIDValue(u)
	case 6:
		return localtable.BinaryValue([]byte(keyPool[g.r.IntN(3)]))
	}
	return localtable.StringValue(g.key())
}

var props = []string{"PartitionKey", "RowKey", "PartitionKey", "RowKey", "A", "B"}

func (g gen) expr(depth int) filter.Expr {
	if depth <= 0 || g.r.IntN(3) == 0 {
		if g.r.IntN(12) == 0 {
			return &filter.Constant{Value: g.r.IntN(2) == 0}
		}
		p := props[g.r.IntN(len(props))]
		v := g.value()
		if (p == "PartitionKey" || p == "RowKey") && g.r.IntN(6) != 0 {
			v = localtable.StringValue(g.key())
		}
		return &filter.Comparison{Property: p, Op: allOps[g.r.IntN(len(allOps))], Value: v}
	}
	switch g.r.IntN(5) {
	case 0:
		return &filter.NotExpr{X: g.expr(depth - 1)}
	case 1, 2:
		return &filter.OrExpr{Left: g.expr(depth - 1), Right: g.expr(depth - 1)}
	}
	return &filter.AndExpr{Left: g.expr(depth - 1), Right: g.expr(depth - 1)}
}

func (g gen) entity() *localtable.Entity {
	e := &localtable.Entity{PartitionKey: g.key(), RowKey: g.key()}
	for _, p := range []string{"A", "B"} {
		if g.r.IntN(4) != 0 {
			e.Set(p, g.value())
		}
	}
	return e
}

// TestPlanCoversMatches is the planner's invariant: every entity the
// filter matches lies in one of its ranges; and the ranges are sorted,
// disjoint and non-empty. It also checks the round trip of each filter.
func TestPlanCoversMatches(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(1, 2))}
	ents := make([]*localtable.Entity, 300)
	for i := range ents {
		ents[i] = g.entity()
	}
	bounded, matched := 0, 0
	for range 3000 {
		f := filter.New(g.expr(4))
		p, err := filter.ParseWithOptions(f.String(), nil)
		if err != nil || !filter.Equal(p.Expr(), f.Expr()) || p.String() != f.String() {
			t.Fatalf("round trip of %s: %v %v", f, p, err)
		}
		rs, ok := f.KeyRanges()
		if !ok {
			continue
		}
		bounded++
		checkRanges(t, f, rs)
		for _, e := range ents {
			if !f.Match(e) {
				continue
			}
			matched++
			if !containsAny(rs, e) {
				t.Fatalf("%s matches (%q, %q), which no range contains:\n%s", f, e.PartitionKey, e.RowKey, f.Explain())
			}
		}
	}
	if bounded < 500 || matched < 500 {
		t.Errorf("weak test: %d bounded filters, %d matches", bounded, matched)
	}
}

func containsAny(rs []kr, e *localtable.Entity) bool {
	for _, r := range rs {
		if r.Contains(e.PartitionKey, e.RowKey) {
			return true
		}
	}
	return false
}

func TestBuilderRoundTrip(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(3, 4))}
	for range 1000 {
		v := g.value()
		f := filter.And(filter.PartitionKey().Eq(g.key()), filter.Prop("A").Compare(allOps[g.r.IntN(6)], v))
		p, err := filter.Parse(f.String())
		if err != nil || !filter.Equal(p.Expr(), f.Expr()) {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if s := fmt.Sprint(filter.Or(filter.RowKey().Lt("a"), filter.Not(filter.Timestamp().Ge(filter.Int64(1))))); !strings.Contains(s, "not (Timestamp ge 1L)") {
		t.Errorf("got %s", s)
	}
}

// TestPlanMatchesReference: the planner gives exactly the ranges of the
// reference planner (the simple pairwise one it replaced) on random
// filters: the general ones of gen.expr, and ors of ands of ors of key
// comparisons, nested left and right, which make many ranges.
func TestPlanMatchesReference(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(5, 6))}
	several := 0
	for i := range 16000 {
		var x filter.Expr
		if i%2 == 0 {
			x = g.keyExpr(1+i%3, i%4 == 0)
		} else {
			x = g.expr(1 + i%6)
		}
		f := filter.New(x)
		got, ok := f.KeyRanges()
		want, wok := filter.RefKeyRanges(f)
		if ok != wok || !sameRanges(got, want) {
			t.Fatalf("%s:\n got %v ok=%v\nwant %v ok=%v", f, got, ok, want, wok)
		}
		if ok && len(got) > 1 {
			several++
		}
	}
	if several < 1000 {
		t.Errorf("weak test: %d filters with several ranges", several)
	}
}

// keyExpr returns an or (an and, if and) of 1 to 5 operands, each of the
// other operator down to depth levels, then key comparisons. Operands are
// joined to the left or to the right at random, as the parser and the
// builder nest them.
func (g gen) keyExpr(depth int, and bool) filter.Expr {
	if depth == 0 {
		switch n := g.r.IntN(10); {
		case n < 5:
			return &filter.Comparison{Property: "PartitionKey", Op: filter.OpEq, Value: localtable.StringValue(g.key())}
		case n < 9:
			return g.keyCmp()
		}
		return g.expr(0)
	}
	x := g.keyExpr(depth-1, !and)
	for range g.r.IntN(5) {
		l, r := x, g.keyExpr(depth-1, !and)
		if g.r.IntN(3) == 0 {
			l, r = r, l
		}
		if and {
			x = &filter.AndExpr{Left: l, Right: r}
		} else {
			x = &filter.OrExpr{Left: l, Right: r}
		}
	}
	return x
}

// keyCmp returns a comparison of PartitionKey or RowKey with a string,
// mostly eq.
func (g gen) keyCmp() filter.Expr {
	op := filter.OpEq
	if g.r.IntN(2) == 0 {
		op = allOps[g.r.IntN(len(allOps))]
	}
	return &filter.Comparison{Property: props[g.r.IntN(2)], Op: op, Value: localtable.StringValue(g.key())}
}

// TestPlanBudget: narrowing by RowKey may multiply ranges, up to
// MaxNarrowGrowth added ranges per plan; beyond, the ranges are left whole,
// which still contains every match.
func TestPlanBudget(t *testing.T) {
	cross := func(pk string, n int) string {
		return orOf("PartitionKey", pk, 0, n) + " and " + orOf("RowKey", "r", 0, n)
	}
	plan := func(s string) []kr {
		t.Helper()
		f, err := filter.ParseWithOptions(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		rs, ok := f.KeyRanges()
		if !ok {
			t.Fatalf("%.40s…: full scan", s)
		}
		checkRanges(t, f, rs)
		return rs
	}
	// 200 partitions × 200 RowKeys: 40,000 points, as the reference plans.
	f, _ := filter.ParseWithOptions(cross("a", 200), nil)
	want, _ := filter.RefKeyRanges(f)
	if got := plan(cross("a", 200)); len(got) != 40000 || !sameRanges(got, want) {
		t.Errorf("200×200: %d ranges, want the reference's %d", len(got), len(want))
	}
	// 300 × 300 would add more than the budget: 300 whole partitions.
	if filter.MaxNarrowGrowth >= 300*300-300 {
		t.Fatal("budget too large for the test")
	}
	got := plan(cross("a", 300))
	if len(got) != 300 {
		t.Fatalf("300×300: %d ranges", len(got))
	}
	for i, r := range got {
		pk := fmt.Sprintf("a%05d", i)
		if want := rg(pStart(pk), pEnd(pk)); !sameRanges([]kr{r}, []kr{want}) {
			t.Fatalf("300×300: range %d is %v, want %v", i, r, want)
		}
	}
	// The budget is per plan: the first 200 × 200 spends most of it, and
	// the second is left whole.
	got = plan("(" + cross("a", 200) + ") or (" + cross("b", 200) + ")")
	if len(got) != 40000+200 || !sameRanges(got[:40000], want) {
		t.Errorf("two 200×200: %d ranges", len(got))
	}
}

// TestPlanLarge: filters of up to MaxLength bytes parse and plan quickly,
// whatever their shape; the pairwise planner took minutes for 1,000
// or-ed point lookups, and hours for these.
func TestPlanLarge(t *testing.T) {
	fill := func(unit, sep string) string {
		n := (filter.MaxLength + len(sep)) / (len(unit) + len(sep))
		return strings.Repeat(unit+sep, n-1) + unit
	}
	// Deepest and/or alternation: each level ors the one below with point
	// lookups and ands it with key bounds, so every level replans it all.
	deep := "PartitionKey eq 'x'"
	for k := range filter.MaxDepth - 1 {
		var b strings.Builder
		b.WriteString("(" + deep + ")")
		for i := range 200 {
			fmt.Fprintf(&b, " or PartitionKey eq 'p%03d%04d' and RowKey eq 'r%d'", k, i, i)
		}
		deep = b.String() + " and PartitionKey ge 'a' and RowKey ge 'a'"
	}
	tests := []struct {
		name   string
		s      string
		ranges int // -1 for a full scan
	}{
		{"points", orOfPoints(18000), 18000},
		{"and of ors", orOf("PartitionKey", "p", 0, 13000) + " and " + orOf("PartitionKey", "p", 6500, 13000), 6500},
		{"cross", orOf("PartitionKey", "p", 0, 13000) + " and " + orOf("RowKey", "r", 0, 13000), 13000},
		{"bare properties", fill("A", " or "), -1},
		{"constants", fill("true", " and "), -1},
		{"deep", deep, 99*200 + 1},
	}
	start := time.Now()
	for _, test := range tests {
		if len(test.s) > filter.MaxLength || len(test.s) < filter.MaxLength*6/10 {
			t.Fatalf("%s: %d bytes", test.name, len(test.s))
		}
		f, err := filter.ParseWithOptions(test.s, nil)
		if err != nil {
			t.Fatalf("%s: %v", test.name, err)
		}
		rs, ok := f.KeyRanges()
		if ok && len(rs) != test.ranges || !ok && test.ranges != -1 {
			t.Errorf("%s: %d ranges (ok %v), want %d", test.name, len(rs), ok, test.ranges)
		}
	}
	// Generous for the race detector and a busy machine: it takes well
	// under a second.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}

// countingReader counts the properties a match reads.
type countingReader struct {
	e *localtable.Entity
	n int
}

func (c *countingReader) Property(name string) (localtable.Value, bool) {
	c.n++
	return c.e.Property(name)
}

// TestMatchInRanges: for every entity within a filter's key ranges,
// MatchInRanges agrees with Match; and it reads fewer properties where
// the ranges decide a key comparison of the filter's and chain.
func TestMatchInRanges(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(5, 6))}
	ents := make([]*localtable.Entity, 300)
	for i := range ents {
		ents[i] = g.entity()
	}
	keyComparison := func() filter.Expr {
		p := props[g.r.IntN(2)]
		return &filter.Comparison{Property: p, Op: allOps[g.r.IntN(len(allOps))], Value: localtable.StringValue(g.key())}
	}
	checked, fewer := 0, 0
	for i := range 4000 {
		// And chains of key comparisons and other terms, and any filter.
		x := g.expr(4)
		if i%2 == 0 {
			x = keyComparison()
			for range g.r.IntN(4) {
				y := keyComparison()
				if g.r.IntN(3) == 0 {
					y = g.expr(2)
				}
				x = &filter.AndExpr{Left: x, Right: y}
			}
		}
		f := filter.New(x)
		rs, ok := f.KeyRanges()
		for _, e := range ents {
			if ok && !containsAny(rs, e) {
				continue
			}
			checked++
			all, in := &countingReader{e: e}, &countingReader{e: e}
			want := f.Match(e)
			if got := f.MatchReader(all); got != want {
				t.Fatalf("%s on (%q, %q): MatchReader %v, Match %v", f, e.PartitionKey, e.RowKey, got, want)
			}
			if got := f.MatchInRanges(in); got != want {
				t.Fatalf("%s on (%q, %q) within its ranges: MatchInRanges %v, Match %v\n%s", f, e.PartitionKey, e.RowKey, got, want, f.Explain())
			}
			if got := f.TypeCheck().MatchInRanges(e); got != want {
				t.Fatalf("%s on (%q, %q) within its ranges: TypeCheck's MatchInRanges %v, Match %v", f, e.PartitionKey, e.RowKey, got, want)
			}
			if in.n > all.n {
				t.Fatalf("%s on (%q, %q): MatchInRanges reads %d properties, MatchReader %d", f, e.PartitionKey, e.RowKey, in.n, all.n)
			}
			if in.n < all.n {
				fewer++
			}
		}
	}
	if checked < 100000 || fewer < 10000 {
		t.Errorf("weak test: %d entities checked, %d with fewer reads", checked, fewer)
	}

	// The bench's partition scan: Age alone is read.
	f := filter.And(filter.PartitionKey().Eq("p"), filter.Prop("Age").Gt(int32(50)))
	e := &localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{"Age": localtable.Int32Value(51)}}
	c := &countingReader{e: e}
	if !f.MatchInRanges(c) || c.n != 1 {
		t.Errorf("%s: MatchInRanges read %d properties, want Age alone", f, c.n)
	}
}

// TestMatchInRangesWholeSpans: where narrowing by RowKey is over budget,
// the ranges are whole partitions, and decide no RowKey comparison.
func TestMatchInRangesWholeSpans(t *testing.T) {
	var pks, rks []filter.Expr
	for i := range 300 {
		pks = append(pks, filter.PartitionKey().Eq(fmt.Sprintf("p%03d", i)).Expr())
		rks = append(rks, filter.RowKey().Eq(fmt.Sprintf("r%03d", i)).Expr())
	}
	rks = append(rks, filter.RowKey().Eq("y").Expr())
	or := func(xs []filter.Expr) filter.Expr {
		x := xs[0]
		for _, y := range xs[1:] {
			x = &filter.OrExpr{Left: x, Right: y}
		}
		return x
	}
	for _, last := range []filter.Expr{filter.RowKey().Lt("x").Expr(), filter.RowKey().Le("x").Expr(), filter.RowKey().Ge("q").Expr()} {
		f := filter.New(&filter.AndExpr{Left: &filter.AndExpr{Left: or(pks), Right: or(rks)}, Right: last})
		rs, ok := f.KeyRanges()
		if !ok || len(rs) != 300 {
			t.Fatalf("%d ranges (ok %v), want the 300 partitions whole", len(rs), ok)
		}
		for _, rk := range []string{"r001", "y"} {
			e := &localtable.Entity{PartitionKey: "p001", RowKey: rk}
			if !containsAny(rs, e) {
				t.Fatalf("%s: (p001, %s) outside the ranges: %v", last, rk, rs[:3])
			}
			if got, want := f.MatchInRanges(e), f.Match(e); got != want {
				t.Errorf("%s on (p001, %s): MatchInRanges %v, Match %v", last, rk, got, want)
			}
		}
	}
}
