package tests

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/tabletest"
)

// The differential query test: random typed data, random $filter strings
// from a grammar, and every way of running a query (QueryAll, pages of a
// small PageSize, pages cut short by ScanLimit, with and without Select)
// compared with brute force: every entity of the table, kept when the
// filter's Match accepts it. It also checks the planner's contract (the
// ranges are sorted, disjoint, non-empty and hold every match) and its
// efficiency (a query scans nothing outside its ranges, and a key-bounded
// query scans only what it returns).
//
// A failure prints the seed and the filter; rerun it with
//
//	go test -run TestQueryDifferential -diff.seed N -diff.filters M

var (
	diffSeed    = flag.Uint64("diff.seed", 0, "seed of TestQueryDifferential's data and filters; 0 means the fixed default")
	diffFilters = flag.Int("diff.filters", 300, "random filters per engine in TestQueryDifferential")
)

const defaultDiffSeed = 0x10ca17ab1e

const (
	diffParts = 5  // partitions
	diffRows  = 60 // rows per partition
)

// diffRunes are the characters of generated keys and strings: ASCII around
// the edges of the syntax (a quote, a space), Latin-1, a CJK character,
// U+E000 and U+FFFD, and characters above U+FFFF, whose UTF-16 surrogate
// pairs sort before U+E000 though their UTF-8 sorts after it.
var diffRunes = []rune{'a', 'b', 'z', 'A', '0', ' ', '~', '\'', 'é', '\u00a0', '中', '\ue000', '\ufffd', '\U00010000', '😀', '\U0010fffd'}

// diffProp is a custom property of the generated entities and the kinds
// its values take; M and N take several, so that the same name has
// different types across entities.
type diffProp struct {
	name  string
	kinds []localtable.Kind
}

var allKinds = []localtable.Kind{
	localtable.KindString, localtable.KindInt32, localtable.KindInt64, localtable.KindDouble,
	localtable.KindBool, localtable.KindDateTime, localtable.KindGUID, localtable.KindBinary,
}

var diffProps = []diffProp{
	{"S", []localtable.Kind{localtable.KindString}},
	{"I", []localtable.Kind{localtable.KindInt32}},
	{"L", []localtable.Kind{localtable.KindInt64}},
	{"D", []localtable.Kind{localtable.KindDouble}},
	{"B", []localtable.Kind{localtable.KindBool}},
	{"T", []localtable.Kind{localtable.KindDateTime}},
	{"G", []localtable.Kind{localtable.KindGUID}},
	{"X", []localtable.Kind{localtable.KindBinary}}, // also the binary literal prefix
	{"M", allKinds},
	{"N", []localtable.Kind{localtable.KindInt32, localtable.KindInt64, localtable.KindDouble}},
}

// Value pools, small so that comparisons often meet equal values.
var (
	diffInt32s  = []int32{-2, -1, 0, 1, 2, 3, math.MinInt32, math.MaxInt32}
	diffInt64s  = []int64{-2, -1, 0, 1, 2, 3, 1 << 40, 3_000_000_000, math.MinInt64, math.MaxInt64}
	diffDoubles = []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 1, 2, 1.5, -2.5, 0.1, 1e300, 5e-324, math.MaxInt32, math.MinInt32}
	diffGUIDs   = []localtable.GUID{
		localtable.MustParseGUID("00000000-0000-0000-0000-000000000000"),
		localtable.MustParseGUID("4185404a-5818-48c3-b9be-f217df0dba6f"),
		localtable.MustParseGUID("4185404a-5818-48c3-b9be-f217df0dba70"),
		localtable.MustParseGUID("a0000000-0000-0000-0000-000000000001"),
		localtable.MustParseGUID("ffffffff-ffff-ffff-ffff-fffffffffffe"),
	}
	diffBinaries = [][]byte{{}, {0}, {0, 0}, {1}, {0x0a, 0x0b}, {0xff}, {0xff, 0}}
	// DateTimes 100 ns apart, a whole minute, and the limits.
	diffBase  = localtable.TimeToTicks(time.Date(2020, 5, 17, 12, 34, 56, 123456700, time.UTC))
	diffTimes = []int64{
		diffBase, diffBase + 1, diffBase + 2, diffBase + 3, diffBase + 4, diffBase + 5,
		localtable.TimeToTicks(time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)),
		localtable.TimeToTicks(localtable.MinDateTime), localtable.TimeToTicks(localtable.MaxDateTime),
	}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func randString(r *rand.Rand, minLen, maxLen int) string {
	var b strings.Builder
	for n := minLen + r.IntN(maxLen-minLen+1); n > 0; n-- {
		b.WriteRune(pick(r, diffRunes))
	}
	return b.String()
}

func randValue(r *rand.Rand, k localtable.Kind) localtable.Value {
	switch k {
	case localtable.KindString:
		return localtable.StringValue(randString(r, 0, 3))
	case localtable.KindInt32:
		return localtable.Int32Value(pick(r, diffInt32s))
	case localtable.KindInt64:
		return localtable.Int64Value(pick(r, diffInt64s))
	case localtable.KindDouble:
		return localtable.DoubleValue(pick(r, diffDoubles))
	case localtable.KindBool:
		return localtable.BoolValue(r.IntN(2) == 0)
	case localtable.KindDateTime:
		return localtable.DateTimeTicksValue(pick(r, diffTimes))
	case localtable.KindGUID:
		return localtable.GUIDValue(pick(r, diffGUIDs))
	case localtable.KindBinary:
		return localtable.BinaryValue(pick(r, diffBinaries))
	}
	panic("randValue: " + k.String())
}

// diffEntities generates the data set: diffParts partitions of diffRows
// entities, keys from diffRunes (possibly empty), each entity with a random
// subset of diffProps.
func diffEntities(r *rand.Rand) []localtable.Entity {
	var es []localtable.Entity
	pks := map[string]bool{}
	for len(pks) < diffParts {
		pk := randString(r, 1, 3)
		if len(pks) == 0 && r.IntN(2) == 0 {
			pk = "" // the empty PartitionKey is valid
		}
		if pks[pk] {
			continue
		}
		pks[pk] = true
		rks := map[string]bool{}
		for len(rks) < diffRows {
			rk := randString(r, 0, 4)
			if rks[rk] {
				continue
			}
			rks[rk] = true
			e := localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: localtable.Properties{}}
			for _, p := range diffProps {
				if r.IntN(5) > 0 {
					e.Properties[p.name] = randValue(r, pick(r, p.kinds))
				}
			}
			es = append(es, e)
		}
	}
	return es
}

// compareUTF16 orders strings by UTF-16 code units, the service's order,
// independently of internal/keyenc.
func compareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

func compareKeys(a, b *localtable.Entity) int {
	if c := compareUTF16(a.PartitionKey, b.PartitionKey); c != 0 {
		return c
	}
	return compareUTF16(a.RowKey, b.RowKey)
}

// sameEntity reports whether two entities are identical, values compared
// by bits (so NaN equals NaN and -0 differs from 0).
func sameEntity(a, b *localtable.Entity) bool {
	if a.PartitionKey != b.PartitionKey || a.RowKey != b.RowKey || !a.Timestamp.Equal(b.Timestamp) || a.ETag != b.ETag || len(a.Properties) != len(b.Properties) {
		return false
	}
	for n, v := range a.Properties {
		if w, ok := b.Properties[n]; !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

func projected(e localtable.Entity, sel []string) localtable.Entity {
	e = e.Clone()
	for n := range e.Properties {
		if !slices.Contains(sel, n) {
			delete(e.Properties, n)
		}
	}
	return e
}

func showKey(e *localtable.Entity) string {
	return strconv.Quote(e.PartitionKey) + "/" + strconv.Quote(e.RowKey)
}

// diffResults describes how got differs from want, or returns "".
func diffResults(got, want []localtable.Entity) string {
	if slices.EqualFunc(got, want, func(a, b localtable.Entity) bool { return sameEntity(&a, &b) }) {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "got %d entities, want %d", len(got), len(want))
	inWant := map[string]bool{}
	for i := range want {
		inWant[showKey(&want[i])] = true
	}
	inGot := map[string]bool{}
	n := 0
	for i := range got {
		k := showKey(&got[i])
		inGot[k] = true
		if !inWant[k] && n < 5 {
			fmt.Fprintf(&b, "\n  extra %s %v", k, got[i].Properties)
			n++
		}
	}
	n = 0
	for i := range want {
		if k := showKey(&want[i]); !inGot[k] && n < 5 {
			fmt.Fprintf(&b, "\n  missing %s %v", k, want[i].Properties)
			n++
		}
	}
	for i := range min(len(got), len(want)) {
		if !sameEntity(&got[i], &want[i]) {
			fmt.Fprintf(&b, "\n  first difference at %d: got %s %v, want %s %v", i, showKey(&got[i]), got[i].Properties, showKey(&want[i]), want[i].Properties)
			break
		}
	}
	return b.String()
}

// declareDiffIndexes declares the indexes of loadDiffTable: one per
// property, half before the entities are written (kept by the writes),
// half after (built), and one of two properties.
func declareDiffIndexes(t *testing.T, tbl *localtable.Table, after bool) {
	t.Helper()
	for i, p := range diffProps {
		if (i%2 == 1) == after {
			if err := tbl.CreateIndex(ctx, "by"+p.name, p.name); err != nil {
				t.Fatalf("CreateIndex: %v", err)
			}
		}
	}
	if after {
		if err := tbl.CreateIndex(ctx, "byNM", "N", "M"); err != nil {
			t.Fatalf("CreateIndex: %v", err)
		}
	}
}

// loadDiffTable writes es to a new table on eng (see
// query_diff_gen_test.go), declaring the indexes of declareDiffIndexes
// when indexed.
func loadDiffTable(t *testing.T, eng tabletest.Engine, es []localtable.Entity, r *rand.Rand, indexed bool, records localtable.IndexRecords) (*localtable.Table, []localtable.Entity) {
	t.Helper()
	clk := tabletest.NewFakeClock(localtable.TicksToTime(diffBase))
	a := tabletest.OpenAccount(t, eng, &localtable.Options{Clock: clk.Now, IndexRecords: records})
	tbl, err := a.CreateTable(ctx, "diff")
	if err != nil {
		t.Fatal(err)
	}
	if indexed {
		declareDiffIndexes(t, tbl, false)
		defer func() {
			declareDiffIndexes(t, tbl, true)
			rep, err := a.Verify(ctx)
			if err != nil || !rep.OK() {
				t.Fatalf("Verify: %v %v %+v", err, rep.Problems, rep.Tables)
			}
		}()
	}
	for i := 0; i < len(es); {
		if r.IntN(3) == 0 {
			if _, err := tbl.Insert(ctx, es[i]); err != nil {
				t.Fatalf("Insert %s: %v", showKey(&es[i]), err)
			}
			i++
			continue
		}
		// A transaction of up to 30 entities of one partition.
		acts := []localtable.Action{{Type: localtable.ActionInsert, Entity: es[i]}}
		for i++; i < len(es) && len(acts) < 30 && es[i].PartitionKey == acts[0].Entity.PartitionKey && r.IntN(20) > 0; i++ {
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: es[i]})
		}
		if _, err := tbl.Transact(ctx, acts); err != nil {
			t.Fatalf("Transact: %v", err)
		}
	}
	var all []localtable.Entity
	for e, err := range tbl.QueryAll(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
	}
	// The table holds what was written, in UTF-16 key order.
	byKey := map[string]*localtable.Entity{}
	for i := range es {
		byKey[showKey(&es[i])] = &es[i]
	}
	if len(all) != len(es) {
		t.Fatalf("table holds %d entities, wrote %d", len(all), len(es))
	}
	for i := range all {
		e := &all[i]
		if i > 0 && compareKeys(&all[i-1], e) >= 0 {
			t.Errorf("entities out of UTF-16 key order: %s before %s", showKey(&all[i-1]), showKey(e))
		}
		w := byKey[showKey(e)]
		if w == nil {
			t.Fatalf("unexpected entity %s", showKey(e))
		}
		if e.Timestamp.IsZero() || e.ETag == "" || !sameEntity(e, &localtable.Entity{PartitionKey: w.PartitionKey, RowKey: w.RowKey, Timestamp: e.Timestamp, ETag: e.ETag, Properties: w.Properties}) {
			t.Errorf("entity %s read back as %v, wrote %v", showKey(e), e.Properties, w.Properties)
		}
	}
	return tbl, all
}

func TestQueryDifferential(t *testing.T) {
	seed := *diffSeed
	if seed == 0 {
		seed = defaultDiffSeed
	}
	nFilters := *diffFilters
	if testing.Short() {
		nFilters /= 5
	}
	// Each engine with its default indexes (covering on memory alone),
	// and pebble with covering ones.
	run := func(t *testing.T, eng tabletest.Engine, records localtable.IndexRecords) {
		t.Parallel()
		r := rand.New(rand.NewPCG(seed, 1))
		es := diffEntities(r)
		tbl, all := loadDiffTable(t, eng, es, r, true, records)
		g := &filterGen{r: r, ents: all}
		for _, p := range diffProps {
			g.names = append(g.names, p.name)
		}
		var sum diffSummary
		failures := 0
		for i := 0; i < nFilters && failures < 10; i++ {
			s, ref := g.filter()
			if i%2 == 1 {
				s, ref = g.indexFilter() // one an index serves
			}
			if !checkFilter(t, tbl, all, g, s, &ref, &sum) {
				failures++
				t.Logf("seed %d, filter %d: %s", seed, i, s)
			}
		}
		t.Logf("seed %d, %d filters: %d match nothing, %d some, %d all; %d planned (%d key-exact), %d full scans; %d with Boolean literals; %d entities matched, %d scanned; %d read an index (%d answered by it alone)",
			seed, nFilters, sum.none, sum.some, sum.all, sum.planned, sum.exact, nFilters-sum.planned, sum.constants, sum.matched, sum.scanned, sum.indexed, sum.proven)
		if sum.constants < nFilters/20 {
			t.Errorf("weak test: only %d of %d filters have a Boolean literal", sum.constants, nFilters)
		}
		if sum.indexed < nFilters/5 {
			t.Errorf("weak test: only %d of %d filters read an index", sum.indexed, nFilters)
		}
		if sum.proven < nFilters/20 {
			t.Errorf("weak test: only %d of %d filters read an index that answers them alone", sum.proven, nFilters)
		}
	}
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) { run(t, eng, localtable.IndexRecordsDefault) })
	t.Run("pebble-covering", func(t *testing.T) { run(t, tabletest.Engines[1], localtable.IndexRecordsAlways) })
}

// diffSummary counts what the random filters exercised.
type diffSummary struct {
	none, some, all  int // filters by how many entities they match
	planned, exact   int // filters with key ranges; exactly the matches
	constants        int // filters with a bare true or false
	matched, scanned int // entities, over all filters' single-page queries
	indexed          int // filters whose query read an index
	proven           int // of those, the filters the index answers alone
}

// checkFilter runs filter s every way and compares with brute force,
// reporting what differs; it returns false if anything did.
func checkFilter(t *testing.T, tbl *localtable.Table, all []localtable.Entity, g *filterGen, s string, ref *refExpr, sum *diffSummary) bool {
	t.Helper()
	ok := true
	fail := func(format string, args ...any) {
		t.Helper()
		ok = false
		t.Errorf("filter %s:\n"+format, append([]any{s}, args...)...)
	}
	f, err := filter.ParseWithOptions(s, nil)
	if err != nil {
		fail("ParseWithOptions: %v", err)
		return false
	}

	// Round trip through the canonical form, with the service's limit.
	canon := f.String()
	n := countComparisons(f.Expr())
	f2, err := filter.Parse(canon)
	switch {
	case n > filter.MaxComparisons && err == nil:
		fail("Parse accepted %d comparisons", n)
	case n > filter.MaxComparisons:
		f2, err = filter.ParseWithOptions(canon, nil)
	}
	if err != nil {
		fail("Parse(%q): %v", canon, err)
	} else if !filter.Equal(f.Expr(), f2.Expr()) || f2.String() != canon {
		fail("round trip: String %q parses as %q", canon, f2.String())
	}

	// Brute force, and Match against the reference semantics.
	var want []localtable.Entity
	mismatches := 0
	for i := range all {
		m := f.Match(&all[i])
		if m {
			want = append(want, all[i])
		}
		if r := refMatch(ref, &all[i]); r != m && mismatches < 3 {
			mismatches++
			fail("Match(%s %v) = %v, reference semantics say %v (parsed as %s)", showKey(&all[i]), all[i].Properties, m, r, canon)
		}
	}

	// The plan: sorted, disjoint, non-empty ranges holding every match.
	ranges, planned := f.KeyRanges()
	inRanges := len(all)
	if planned {
		for i, rg := range ranges {
			if rg.Empty() {
				fail("range %d is empty\n%s", i, f.Explain())
			}
			if i > 0 && (ranges[i-1].End.IsZero() || ranges[i-1].End.Compare(rg.Start) > 0) {
				fail("ranges %d and %d overlap or are out of order\n%s", i-1, i, f.Explain())
			}
		}
		contains := func(e *localtable.Entity) bool {
			return slices.ContainsFunc(ranges, func(rg localtable.KeyRange) bool { return rg.Contains(e.PartitionKey, e.RowKey) })
		}
		inRanges = 0
		for i := range all {
			if contains(&all[i]) {
				inRanges++
			}
		}
		for i := range want {
			if !contains(&want[i]) {
				fail("planner unsound: match %s lies outside the ranges\n%s", showKey(&want[i]), f.Explain())
				break
			}
		}
	}
	exact := keyExact(f.Expr())
	if hasConstant(f.Expr()) {
		sum.constants++
	}
	switch len(want) {
	case 0:
		sum.none++
	case len(all):
		sum.all++
	default:
		sum.some++
	}
	if planned {
		sum.planned++
	}
	if exact {
		sum.exact++
	}

	// QueryAll.
	var got []localtable.Entity
	for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: f}) {
		if err != nil {
			fail("QueryAll: %v", err)
			return false
		}
		got = append(got, e)
	}
	if d := diffResults(got, want); d != "" {
		fail("QueryAll: %s\n%s", d, f.Explain())
	}

	// One page: the whole table fits, so Stats count the whole query.
	page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: f})
	if err != nil {
		fail("Query: %v", err)
		return false
	}
	st := page.Stats
	sum.matched += st.Returned
	sum.scanned += st.Scanned
	if d := diffResults(page.Entities, want); d != "" || !page.Continuation.IsZero() {
		fail("Query: %s, continuation %+v", d, page.Continuation)
	}
	if st.Index != "" {
		sum.indexed++
		// A filter that is exactly the index's values, without key
		// ranges: the query returns the entities it fetches unmatched.
		lead := strings.TrimPrefix(st.Index, "by")
		if lead == "NM" {
			lead = "N"
		}
		if !planned && f.PropertyRangesExact(lead) {
			sum.proven++
		}
	}
	if (st.Index == "" && st.FullScan == planned) || st.Returned != len(want) || st.Scanned > inRanges || (planned && st.Index == "" && st.Ranges > len(ranges)) {
		fail("stats %+v: planned %v, %d ranges, %d entities in them, %d matches\n%s", st, planned, len(ranges), inRanges, len(want), f.Explain())
	}
	if exact && st.Scanned != st.Returned {
		fail("key-bounded query scanned %d entities to return %d\n%s", st.Scanned, st.Returned, f.Explain())
	}

	// Pages of a small PageSize, sometimes cut short by ScanLimit, sometimes
	// with Select.
	opts := localtable.QueryOptions{Filter: f, PageSize: 1 + g.r.IntN(9)}
	if g.r.IntN(3) == 0 {
		opts.ScanLimit = 1 + g.r.IntN(20)
	}
	if g.r.IntN(3) == 0 {
		opts.Select = []string{}
		for _, n := range g.names {
			if g.r.IntN(3) == 0 {
				opts.Select = append(opts.Select, n)
			}
		}
		opts.Select = append(opts.Select, "Nope")
	}
	got = got[:0]
	scanned, pages := 0, 0
	for {
		page, err := tbl.Query(ctx, &opts)
		if err != nil {
			fail("page %d of Query %+v: %v", pages, opts, err)
			return false
		}
		pages++
		if len(page.Entities) > opts.PageSize || (opts.ScanLimit > 0 && page.Stats.Scanned > opts.ScanLimit) || page.Stats.Returned != len(page.Entities) {
			fail("page %d of PageSize %d, ScanLimit %d: %d entities, stats %+v", pages, opts.PageSize, opts.ScanLimit, len(page.Entities), page.Stats)
		}
		if page.Stats.Index == "" {
			scanned += page.Stats.Scanned // an index page reads the index anew
		}
		got = append(got, page.Entities...)
		if page.Continuation.IsZero() {
			break
		}
		if pages > len(all)+2 {
			fail("%d pages and counting", pages)
			return false
		}
		opts.Continuation = page.Continuation
	}
	wantPaged := want
	if opts.Select != nil {
		wantPaged = nil
		for _, e := range want {
			wantPaged = append(wantPaged, projected(e, opts.Select))
		}
	}
	if d := diffResults(got, wantPaged); d != "" {
		fail("%d pages of PageSize %d, ScanLimit %d, Select %q: %s", pages, opts.PageSize, opts.ScanLimit, opts.Select, d)
	}
	if scanned > inRanges || (exact && scanned > len(want)) {
		fail("%d pages of PageSize %d, ScanLimit %d scanned %d entities; %d in the ranges, %d matches\n%s", pages, opts.PageSize, opts.ScanLimit, scanned, inRanges, len(want), f.Explain())
	}

	// With and without the table's indexes: the same pages, entity for
	// entity (ETags included), and the same continuations, whatever the
	// PageSize, Limit, Select and MaxBytes.
	for _, o := range []localtable.QueryOptions{
		{Filter: f},
		{Filter: f, PageSize: 1 + g.r.IntN(5)},
		{Filter: f, PageSize: 1 + g.r.IntN(5), Limit: 1 + g.r.IntN(7), Select: []string{"M", "N"}},
		{Filter: f, MaxBytes: 1 + g.r.IntN(400)},
	} {
		if d := comparePages(tbl, o); d != "" {
			fail("with and without indexes, %s\n%s", d, f.Explain())
		}
	}
	if n, err := tbl.Count(ctx, f); err != nil || n != len(want) {
		fail("Count = %d, %v; want %d", n, err, len(want))
	}
	return ok
}

// noIndex hides that its filter is a localtable.IndexPredicate: a query of
// it scans its key ranges, as a table without indexes is read.
type noIndex struct{ f *filter.Filter }

func (n noIndex) Match(e *localtable.Entity) bool              { return n.f.Match(e) }
func (n noIndex) MatchReader(r localtable.PropertyReader) bool { return n.f.MatchReader(r) }
func (n noIndex) KeyRanges() ([]localtable.KeyRange, bool)     { return n.f.KeyRanges() }
func (n noIndex) String() string                               { return n.f.String() }

// comparePages pages through a query of o with its filter, which may read
// an index, and with it hidden behind noIndex, which scans, and describes
// the first difference, or returns "".
func comparePages(tbl *localtable.Table, o localtable.QueryOptions) string {
	f := o.Filter.(*filter.Filter)
	scan := o
	scan.Filter = noIndex{f}
	limit, yielded := o.Limit, 0
	for pages := 1; ; pages++ {
		if limit > 0 {
			o.Limit, scan.Limit = limit-yielded, limit-yielded
		}
		got, err := tbl.Query(ctx, &o)
		if err != nil {
			return fmt.Sprintf("page %d: %v", pages, err)
		}
		want, err := tbl.Query(ctx, &scan)
		if err != nil {
			return fmt.Sprintf("page %d of the scan: %v", pages, err)
		}
		if want.Stats.Index != "" {
			return "the scan read an index"
		}
		if d := diffResults(got.Entities, want.Entities); d != "" {
			return fmt.Sprintf("page %d of %+v (index %q): %s", pages, o, got.Stats.Index, d)
		}
		if got.Continuation != want.Continuation {
			return fmt.Sprintf("page %d of %+v (index %q): continuation %+v, the scan's %+v", pages, o, got.Stats.Index, got.Continuation, want.Continuation)
		}
		if got.Continuation.IsZero() {
			return ""
		}
		yielded += len(got.Entities)
		o.Continuation, scan.Continuation = got.Continuation, got.Continuation
	}
}
