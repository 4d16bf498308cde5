package localtable

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// The planner's use of indexes.
//
// A query whose filter is an IndexPredicate that bounds the leading
// property of a ready index may read the index instead of its key ranges:
// the index's entries in the filter's value ranges give candidate keys,
// kept when they lie in the key ranges and after the continuation; they
// are sorted into (PartitionKey, RowKey) order and each entity is fetched
// (or, from a covering index's entry, read as the entry holds it: see
// coveringValue) and matched by the whole filter, exactly as the scan
// matches it (unless
// the filter is exactly the index's value ranges, without key ranges:
// then every candidate matches, and is returned unmatched). So
// the answers, their order, the pages (PageSize, Limit, MaxBytes) and
// their continuations are the scan's, but for the pages that ScanLimit
// cuts short: a page reads an index only when that reads no more than its
// ScanLimit, so an index page is never cut, where a scan's may be.
//
// The index is chosen when a page reads fewer entries through it than the
// key-range plan would: the plan reads at most maxIndexCandidates index
// entries (more, and the index is dropped for the scan), and counts the
// keys in the key ranges only up to what it needs to decide (see
// planIndex), and not at all when the filter has no key ranges and the
// table is known to hold more (liveTable.minKeys).

// maxIndexCandidates bounds the index entries one page's plan reads: a
// filter whose value ranges hold more is scanned instead.
var maxIndexCandidates = 20_000

// indexPlan is the planner's decision for one page.
type indexPlan struct {
	def     *indexDef
	spans   int         // spans of index keys read
	entries int         // index entries read
	cands   []candidate // as read from the index
	order   []int32     // the positions in cands of the distinct candidates, in key order
	use     bool        // read the index, not the key ranges
	// proven: the predicate is exactly the index's value ranges and has
	// no key ranges, so the candidates are the matches: each entity
	// fetched is returned without matching it again.
	proven bool
	// exact: proven, and the page only counts: it fetches no entity
	exact bool
	why   string // why the index is used, or why none is
	warm  byte   // readCandidates' reads of entries ahead, kept
	buf   *planBuf
}

// planBuf holds the slices of an indexPlan: pooled (planBufs), so that the
// plan of each page, which reads the same number of entries as the last
// page of the same query did, mostly needs no allocation.
type planBuf struct {
	cands []candidate
	order []int32
	sk    []sortKey
}

// planBufs holds the planBufs of released plans.
var planBufs = sync.Pool{New: func() any { return new(planBuf) }}

// maxPooledCands bounds the candidates a pooled planBuf keeps room for.
const maxPooledCands = 4096

// release returns the plan's slices to planBufs: the plan is not used
// after it. The candidates' bytes are views of the engine's reads or
// copies in chunks of their own, which entities read from them may keep:
// only the slices of candidates are reused, cleared.
func (pl *indexPlan) release() {
	pb := pl.buf
	if pb == nil {
		return
	}
	pl.buf = nil
	clear(pl.cands)
	if cap(pl.cands) > maxPooledCands {
		return
	}
	pb.cands, pb.order = pl.cands[:0], pl.order[:0]
	pl.cands, pl.order = nil, nil
	planBufs.Put(pb)
}

// fetches returns how many entities the plan fetches: none when the
// index is covering, or the page only counts its matches (exact).
func (pl *indexPlan) fetches() int {
	if pl.exact || pl.def.Covering {
		return 0
	}
	return len(pl.order)
}

// valueSpans returns the spans of index keys of index x of table tableID
// that hold the values of ranges of its leading property, sorted.
func valueSpans(tableID uint64, x *indexDef, ranges []ValueRange) [][2][]byte {
	prefix := keyenc.AppendIndexPrefix(nil, tableID, x.ID)
	var spans [][2][]byte
	for _, r := range ranges {
		base := append(slices.Clip(prefix), byte(r.Kind))
		lo, hi := base, keyenc.PrefixEnd(base)
		if r.Kind == KindDouble && r.High.kind != KindDouble {
			// NaN, unordered, matches no range: its entries sort after
			// +INF, where an unbounded range of Doubles stops.
			r.High, r.HighExclusive = DoubleValue(math.Inf(1)), false
		}
		if r.Low.kind == r.Kind && r.Kind != KindNull {
			enc := appendIndexValue(slices.Clip(prefix), r.Low)
			if r.LowExclusive {
				enc = keyenc.PrefixEnd(enc)
			}
			lo = enc
		}
		if r.High.kind == r.Kind && r.Kind != KindNull {
			enc := appendIndexValue(slices.Clip(prefix), r.High)
			if !r.HighExclusive {
				enc = keyenc.PrefixEnd(enc)
			}
			hi = enc
		}
		if bytes.Compare(lo, hi) < 0 {
			spans = append(spans, [2][]byte{lo, hi})
		}
	}
	// Sorted and merged, so that no entry is read twice.
	slices.SortFunc(spans, func(a, b [2][]byte) int { return bytes.Compare(a[0], b[0]) })
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && bytes.Compare(s[0], out[n-1][1]) <= 0 {
			if bytes.Compare(s[1], out[n-1][1]) > 0 {
				out[n-1][1] = s[1]
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// inRanges reports whether the entity of key k (S(pk) S(rk)) lies after
// after and in one of ranges.
func inRanges(k []byte, ranges []KeyRange, after Key) bool {
	if !after.IsZero() && bytes.Compare(k, after.enc) < 0 {
		return false
	}
	for _, r := range ranges {
		if (r.Start.IsZero() || bytes.Compare(k, r.Start.enc) >= 0) && (r.End.IsZero() || bytes.Compare(k, r.End.enc) < 0) {
			return true
		}
	}
	return false
}

// planIndex decides whether a page of a query of p over lt, reading
// ranges after after from snap, reads one of lt's ready indexes.
//
// budget, when positive, is the page's ScanLimit: an index that would read
// more (entries and fetches) is not used, so that a page never reads more
// than its ScanLimit, through an index or not.
//
// count says the page only counts its matches: an exact plan then reads
// the index alone.
//
// top is the page's size in matches.
func planIndex(ctx context.Context, a *Account, snap storage.Snapshot, lt *liveTable, p IndexPredicate, ranges []KeyRange, full, count bool, after Key, budget, top int) (*indexPlan, error) {
	defs := *lt.indexes.Load()
	var best *indexPlan
	var why []string
	for i := range defs {
		x := &defs[i]
		if !x.Ready {
			why = append(why, fmt.Sprintf("index %s is not built yet", x.Name))
			continue
		}
		vr, ok := p.PropertyRanges(x.Props[0])
		if !ok {
			why = append(why, fmt.Sprintf("the filter does not bound %s, the leading property of index %s", x.Props[0], x.Name))
			continue
		}
		e, ok := p.(exactRanges)
		proven := ok && full && e.PropertyRangesExact(x.Props[0])
		exact := proven && count
		// An exact plan reads the entries' keys alone.
		pl, err := readCandidates(ctx, a, snap, lt.id, x, vr, ranges, after, !exact)
		if err != nil {
			return nil, err
		}
		if pl == nil {
			why = append(why, fmt.Sprintf("index %s holds more than %d entries in the filter's values of %s", x.Name, maxIndexCandidates, x.Props[0]))
			continue
		}
		pl.proven, pl.exact = proven, exact
		if best == nil || pl.entries < best.entries {
			if best != nil {
				best.release()
			}
			best = pl
		} else {
			pl.release()
		}
	}
	if best == nil {
		if len(why) == 0 {
			return &indexPlan{why: "no index"}, nil
		}
		return &indexPlan{why: strings.Join(why, "; ")}, nil
	}
	// The cost of the index: its entries and the fetches. The key-range
	// plan's: the keys it would read, counted up to that.
	cost := best.entries + best.fetches()
	if budget > 0 && cost > budget {
		best.why = fmt.Sprintf("index %s would read %d entries and fetch %d entities, more than the page's ScanLimit of %d: scanned instead", best.def.Name, best.entries, best.fetches(), budget)
		return best, nil
	}
	// A page of top matches out of many candidates ends early, and so
	// would a scan: it would read about keys × top / candidates. The
	// index is read whole by every page. So the keys are counted up to
	// cost × pages (at most 8 pages' worth), and the scan chosen when its
	// page reads no more than the index's.
	pages := 1
	if !best.exact && top > 0 && len(best.order) > top {
		pages = min((len(best.order)+top-1)/top, 8)
	}
	limit := cost * pages
	n := int(lt.minKeys.Load())
	whole := full && after.IsZero() // the ranges are the whole table
	if !whole || n <= limit {
		var err error
		if n, err = countRangeKeys(snap, lt.id, ranges, after, limit); err != nil {
			return nil, err
		}
		if whole && int64(n) > lt.minKeys.Load() {
			lt.minKeys.Store(int64(n)) // a race may store the lesser count: a lower bound still
		}
	}
	if n <= limit {
		best.why = fmt.Sprintf("index %s would read %d entries and fetch %d entities; the key ranges hold only %d (a page of %d reads about %d): scanned instead", best.def.Name, best.entries, best.fetches(), n, top, n/pages)
		return best, nil
	}
	best.use = true
	if best.exact {
		best.why = fmt.Sprintf("read through index %s on %s: %d entries in %s, counted without fetching an entity (the filter is exactly their values), where a scan would read more than %d keys",
			best.def.Name, strings.Join(best.def.Props, ", "), best.entries, valueSpansText(best.spans), cost)
		return best, nil
	}
	if best.def.Covering {
		best.why = fmt.Sprintf("read through index %s on %s: %d entries in %s, holding the records of %d entities (a covering index: none is fetched), where a scan of the key ranges would read more than %d keys",
			best.def.Name, strings.Join(best.def.Props, ", "), best.entries, valueSpansText(best.spans), len(best.order), cost)
		return best, nil
	}
	best.why = fmt.Sprintf("read through index %s on %s: %d entries in %s, then %d entities fetched, %d reads in all, where a scan of the key ranges would read more than %d keys",
		best.def.Name, strings.Join(best.def.Props, ", "), best.entries, valueSpansText(best.spans), len(best.order), cost, cost)
	return best, nil
}

// valueSpansText says how many spans of the index's values a plan reads:
// one per value range and Edm type a value in it may have (a number may be
// an Int32, an Int64 or a Double; see valueSpans).
func valueSpansText(n int) string {
	if n == 1 {
		return "1 span of values"
	}
	return fmt.Sprintf("%d spans of values (one per range and Edm type)", n)
}

// candidate is an entity a plan reads through an index.
type candidate struct {
	key []byte // S(pk) S(rk)
	// entityKey and rec, read from an entry of a covering index, are the
	// entity's engine key and record: it need not be fetched.
	entityKey, rec []byte
}

// sortKey is a candidate's place in the sort of candidates (sortCandidates):
// the first 16 bytes of its key, which order most pairs without reading
// their keys, and its position. It holds no pointer, so the sort moves it
// without write barriers.
type sortKey struct {
	hi, lo uint64
	i      int32
}

// sortCandidates returns the positions in cs of its distinct candidates,
// in the order of their keys: the candidates themselves are not moved.
func sortCandidates(cs []candidate, pb *planBuf) []int32 {
	if cap(pb.sk) < len(cs) {
		pb.sk = make([]sortKey, len(cs))
	}
	sk := pb.sk[:len(cs)]
	for i := range cs {
		var b [16]byte
		copy(b[:], cs[i].key)
		sk[i] = sortKey{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:]), int32(i)}
	}
	sortKeys(sk, cs, 2*bits.Len(uint(len(sk))))
	order := pb.order[:0]
	if cap(order) < len(cs) {
		order = make([]int32, 0, len(cs))
	}
	for _, k := range sk {
		if n := len(order); n > 0 && bytes.Equal(cs[order[n-1]].key, cs[k.i].key) {
			continue
		}
		order = append(order, k.i)
	}
	return order
}

// less reports whether the candidate of a sorts before that of b: by
// their prefixes, then their keys in cs.
func (a *sortKey) less(b *sortKey, cs []candidate) bool {
	if a.hi != b.hi {
		return a.hi < b.hi
	}
	if a.lo != b.lo {
		return a.lo < b.lo
	}
	return bytes.Compare(cs[a.i].key, cs[b.i].key) < 0
}

// sortKeys sorts sk by sortKey.less: a quicksort whose comparisons are
// inlined (a page's plan sorts hundreds or thousands of candidates, and
// slices.SortFunc's calls of a comparison func were most of its cost),
// insertion sort for short runs, and slices.SortFunc when depth runs out
// (a bad run of pivots), so that it never goes quadratic.
func sortKeys(sk []sortKey, cs []candidate, depth int) {
	for len(sk) > 12 {
		if depth == 0 {
			slices.SortFunc(sk, func(a, b sortKey) int {
				switch {
				case a.less(&b, cs):
					return -1
				case b.less(&a, cs):
					return 1
				}
				return 0
			})
			return
		}
		depth--
		// The median of the first, middle and last as the pivot.
		m, l := len(sk)/2, len(sk)-1
		if sk[m].less(&sk[0], cs) {
			sk[m], sk[0] = sk[0], sk[m]
		}
		if sk[l].less(&sk[m], cs) {
			sk[l], sk[m] = sk[m], sk[l]
			if sk[m].less(&sk[0], cs) {
				sk[m], sk[0] = sk[0], sk[m]
			}
		}
		pivot := sk[m]
		// Hoare's partition: sk[:j+1] ≤ pivot ≤ sk[j+1:], both not empty.
		i, j := -1, len(sk)
		for {
			for i++; sk[i].less(&pivot, cs); i++ {
			}
			for j--; pivot.less(&sk[j], cs); j-- {
			}
			if i >= j {
				break
			}
			sk[i], sk[j] = sk[j], sk[i]
		}
		// The shorter side recursively, the longer in the loop.
		if j+1 < len(sk)-j-1 {
			sortKeys(sk[:j+1], cs, depth)
			sk = sk[j+1:]
		} else {
			sortKeys(sk[j+1:], cs, depth)
			sk = sk[:j+1]
		}
	}
	for i := 1; i < len(sk); i++ {
		for j := i; j > 0 && sk[j].less(&sk[j-1], cs); j-- {
			sk[j], sk[j-1] = sk[j-1], sk[j]
		}
	}
}

// readCandidates reads the entries of index x in the value ranges vr, and
// returns the plan of reading them: the candidates in ranges after after,
// sorted. It returns nil when they are more than maxIndexCandidates. The
// candidates' keys (and, with recs, the records of a covering index's
// entries) are views of the engine's reads when they are stable
// (storage.StableReader), copies in a copyArena's chunks otherwise.
func readCandidates(ctx context.Context, a *Account, snap storage.Snapshot, tableID uint64, x *indexDef, vr []ValueRange, ranges []KeyRange, after Key, recs bool) (*indexPlan, error) {
	spans := valueSpans(tableID, x, vr)
	pb := planBufs.Get().(*planBuf)
	pl := &indexPlan{def: x, spans: len(spans), buf: pb, cands: pb.cands[:0], order: pb.order[:0]}
	view := stableReads(a.eng)
	recs = recs && x.Covering
	prefix := keyenc.AppendTableID(nil, tableID)
	// Copied (the engine's reads are not stable), the candidates' bytes
	// go into the chunks of an arena, not one allocation each.
	var buf copyArena
	// On a stable engine the entries are taken scanAheadBatch at a time,
	// and the first byte of each key and value read before any is used:
	// entries lie apart in memory, and those reads' cache misses then
	// overlap (as matcher.scanAhead's).
	var keys, vals [scanAheadBatch][]byte
	for _, s := range spans {
		it, err := snap.NewIter(&storage.IterOptions{LowerBound: s[0], UpperBound: s[1]})
		if err != nil {
			return nil, err
		}
		ok := it.First()
		for ok {
			n := 1
			keys[0], vals[0] = it.Key(), it.Value() // valid until it moves, on an engine whose reads are not stable
			if view {
				for ok = it.Next(); ok && n < scanAheadBatch; ok = it.Next() {
					keys[n], vals[n] = it.Key(), it.Value()
					n++
				}
				var warm byte
				for j := range n {
					warm += keys[j][len(keys[j])-1]
					if recs && len(vals[j]) > 0 {
						warm += vals[j][0]
					}
				}
				pl.warm += warm
			}
			for j := range n {
				pl.entries++
				if pl.entries > maxIndexCandidates {
					it.Close()
					pl.release()
					return nil, nil
				}
				if pl.entries%1024 == 0 {
					if err := a.interrupted(ctx); err != nil {
						it.Close()
						return nil, err
					}
				}
				key := keys[j]
				k, err := indexEntityKey(key, len(x.Props))
				if err != nil {
					it.Close()
					return nil, fmt.Errorf("localtable: index %s: entry %q does not decode: %w", x.Name, key, err)
				}
				if !inRanges(k, ranges, after) {
					continue
				}
				c := candidate{key: k}
				if recs {
					var ok bool
					if c.entityKey, c.rec, ok = coveringRecord(vals[j], prefix, k); !ok {
						it.Close()
						return nil, fmt.Errorf("localtable: index %s: entry %q does not hold its entity's key and record", x.Name, key)
					}
				}
				if !view {
					if recs {
						c.entityKey, c.rec = buf.copy(c.entityKey, c.rec)
						c.key = c.entityKey[len(prefix):]
					} else {
						c.key, _ = buf.copy(k, nil)
					}
				}
				pl.cands = append(pl.cands, c)
			}
			if !view {
				ok = it.Next()
			}
		}
		if err := it.Close(); err != nil {
			return nil, err
		}
	}
	pl.order = sortCandidates(pl.cands, pb)
	return pl, nil
}

// copyArena copies the bytes of candidates into chunks of copyChunk bytes
// (or one of its own, for a candidate larger than that): fewer allocations
// than one each, and no copying again as a single buffer would grow.
type copyArena struct{ cur []byte }

// copyChunk is the size of a copyArena's chunks.
const copyChunk = 64 << 10

// copy returns copies of a and b, one after the other in one chunk.
func (ar *copyArena) copy(a, b []byte) ([]byte, []byte) {
	n := len(a) + len(b)
	if cap(ar.cur)-len(ar.cur) < n {
		ar.cur = make([]byte, 0, max(n, copyChunk))
	}
	start := len(ar.cur)
	ar.cur = append(append(ar.cur, a...), b...)
	mid, end := start+len(a), len(ar.cur)
	return ar.cur[start:mid:mid], ar.cur[mid:end:end]
}

// countKeys counts the entity keys of table tableID in ranges after
// after, up to limit+1.
func countRangeKeys(snap storage.Snapshot, tableID uint64, ranges []KeyRange, after Key, limit int) (int, error) {
	prefix := keyenc.AppendTableID(nil, tableID)
	tableEnd := keyenc.PrefixEnd(prefix)
	n := 0
	for _, r := range ranges {
		if !after.IsZero() && (r.Start.IsZero() || r.Start.Compare(after) < 0) {
			r.Start = after
		}
		if r.Empty() {
			continue
		}
		lo := append(slices.Clip(prefix), r.Start.enc...)
		hi := tableEnd
		if !r.End.IsZero() {
			hi = append(slices.Clip(prefix), r.End.enc...)
		}
		it, err := snap.NewIter(&storage.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return 0, err
		}
		for ok := it.First(); ok && n <= limit; ok = it.Next() {
			n++
		}
		if err := it.Close(); err != nil {
			return 0, err
		}
		if n > limit {
			break
		}
	}
	return n, nil
}

// readIndexed reads one page from the candidates of pl, as query's scan
// of ranges would: the same matches, the same end, the same continuation.
func (t *Table) readIndexed(ctx context.Context, snap storage.Snapshot, tableID uint64, pl *indexPlan, ranges []KeyRange, opts QueryOptions, sel selection, spec scanSpec, page *QueryPage) error {
	page.Stats.Index = pl.def.Name
	page.Stats.FullScan = false
	page.Stats.Ranges = pl.spans
	page.Stats.Scanned = pl.entries
	spec.scanLimit = 0 // the plan is within it: see planIndex
	if pl.exact && spec.count {
		page.Stats.Returned = len(pl.order) // the candidates are the matches
		return nil
	}
	if pl.proven {
		// Every candidate matches: the entities are returned as a query
		// without a filter returns them.
		opts.Filter = nil
	}
	m := t.newMatcher(ctx, opts, sel, spec, page)
	prefix := keyenc.AppendTableID(nil, tableID)
	// Without covering entries, one iterator, seeking forward from
	// candidate to candidate: cheaper than a Get each on an LSM engine.
	var it storage.Iterator
	if !pl.def.Covering {
		var err error
		if it, err = snap.NewIter(&storage.IterOptions{LowerBound: prefix, UpperBound: keyenc.PrefixEnd(prefix)}); err != nil {
			return err
		}
		defer it.Close()
	}
	var key []byte
	for j, i := range pl.order {
		c := &pl.cands[i]
		if pl.def.Covering && j%scanAheadBatch == 0 {
			// The next records read ahead, their cache misses overlapping
			// (as readCandidates reads the entries).
			var warm byte
			for _, i := range pl.order[j:min(j+scanAheadBatch, len(pl.order))] {
				if r := pl.cands[i].rec; len(r) > 0 {
					warm += r[0] + r[len(r)/2]
				}
			}
			pl.warm += warm
		}
		var end bool
		var err error
		if pl.def.Covering {
			// The entry holds the entity: visited as read, it is not
			// counted again.
			page.Stats.Scanned--
			end, err = m.visit(c.entityKey, c.rec)
		} else {
			key = append(append(key[:0], prefix...), c.key...)
			if !it.SeekGE(key) || !bytes.Equal(it.Key(), key) {
				if err := it.Error(); err != nil {
					return err
				}
				page.Stats.Scanned++ // an entry of no entity: Verify reports it
				continue
			}
			end, err = m.visit(it.Key(), it.Value()) // not key, which is reused: an entity may keep views of it
		}
		if err != nil {
			return err
		}
		if !end {
			continue
		}
		if spec.final && page.Stats.Returned == spec.top {
			return nil // the Limit is reached: the query ends here
		}
		pk, rk, err := keyenc.DecodePair(c.key)
		if err != nil {
			return err
		}
		page.Continuation = continuationAfter(pk, rk)
		// The page continues if a key follows in the ranges, as a scan's.
		more, err := anyKeyAfter(snap, ranges, KeyAfter(pk, rk), prefix)
		if err != nil {
			return err
		}
		if !more {
			page.Continuation = Continuation{}
		}
		return nil
	}
	return nil
}

// anyKeyAfter reports whether any of ranges holds a key after after.
func anyKeyAfter(snap storage.Snapshot, ranges []KeyRange, after Key, prefix []byte) (bool, error) {
	var rest []KeyRange
	for _, r := range ranges {
		if r.Start.IsZero() || r.Start.Compare(after) < 0 {
			r.Start = after
		}
		if !r.Empty() {
			rest = append(rest, r)
		}
	}
	return anyKey(snap, rest, prefix, keyenc.PrefixEnd(prefix))
}

// Explain returns how a query of opts would read its first page (the
// page at opts.Continuation, with its ScanLimit) now: through which index and why, or the key
// ranges, and why no index; then the filter's own plan when it has an
// Explain method (as package filter's do).
func (t *Table) Explain(ctx context.Context, opts *QueryOptions) (string, error) {
	var o QueryOptions
	if opts != nil {
		o = *opts
	}
	a := t.a
	if err := a.enter(ctx); err != nil {
		return "", err
	}
	defer a.exit()
	if err := checkPredicate(o.Filter); err != nil {
		return "", err
	}
	var after Key
	if !o.Continuation.IsZero() {
		var err error
		if after, err = o.Continuation.position(); err != nil {
			return "", err
		}
	}
	ranges, full, err := predicateRanges(o.Filter)
	if err != nil {
		return "", err
	}
	lt, snap, err := a.tableSnapshot(ctx, t.name)
	if err != nil {
		return "", err
	}
	defer snap.Close()
	var b strings.Builder
	used, proven := false, false // the page reads an index; its candidates all match
	ip, ok := o.Filter.(IndexPredicate)
	switch {
	case len(*lt.indexes.Load()) == 0:
		b.WriteString("no index: the table declares none")
	case o.Filter == nil:
		b.WriteString("no index: no filter")
	case !ok:
		fmt.Fprintf(&b, "no index: the filter (%T) bounds no property", o.Filter)
	default:
		budget := o.ScanLimit
		switch {
		case budget == 0:
			budget = DefaultScanLimit
		case budget < 0:
			budget = 0
		}
		top, err := pageSize(o.PageSize)
		if err != nil {
			return "", err
		}
		if o.Limit > 0 {
			top = min(top, o.Limit)
		}
		pl, err := planIndex(ctx, a, snap, lt, ip, ranges, full, false, after, budget, top)
		if err != nil {
			return "", err
		}
		defer pl.release()
		if pl.use {
			b.WriteString("index: " + pl.why)
		} else {
			b.WriteString("no index: " + pl.why)
		}
		used, proven = pl.use, pl.proven
	}
	b.WriteByte('\n')
	switch {
	case used && full:
		b.WriteString("key ranges: the whole table, not scanned: the index is read instead")
	case used:
		fmt.Fprintf(&b, "key ranges: %d, not scanned: the index is read instead (its candidates are kept within them)", len(ranges))
	case full:
		b.WriteString("key ranges: full scan")
	default:
		fmt.Fprintf(&b, "key ranges: %d", len(ranges))
	}
	if e, ok := o.Filter.(interface{ Explain() string }); ok {
		plan := e.Explain()
		if used {
			// The filter's own key ranges are those above, read through
			// the index: only what it leaves to check is said.
			if i := strings.LastIndex(plan, "residual: "); i >= 0 {
				plan = strings.TrimPrefix(plan[i:], "residual: ")
			}
		}
		switch {
		case used && proven:
			b.WriteString("\nfilter: not checked on the entities fetched (each matches, the filter being exactly the index's values): " + plan)
		case used:
			b.WriteString("\nfilter: checked on each entity fetched: " + plan)
		default:
			b.WriteString("\nfilter plan:\n" + plan)
		}
	}
	return b.String(), nil
}
