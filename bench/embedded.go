package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/localtable/localtable/filter"
)

// The embedded workloads, in the order they run: the reads first, on the
// data set as loaded, then the writes.
const (
	wReopen = "reopen"
	wGet    = "point get"
	wRange  = "range of 100 rows"
	wPart   = "partition scan, Int32 filter"
	wFull   = "full-table filter, 1% match"
	wInsert = "single insert"
	wTx100  = "transaction of 100"
	wUpdate = "ETag-contended update"
)

// The embedded systems.
const (
	sLtMem   = "localtable memory"
	sRawTree = "raw btree"
	sLtPeb   = "localtable pebble"
	sRawPeb  = "raw pebble"
	sSQLite  = "SQLite"
	sBolt    = "bbolt"

	// The hot-path reads (get, range, full scan) of the stores above:
	// localtable's in-place reads (GetRow, Rows) and the bare engines'
	// reads into a reused buffer. Each views the store it names, sharing
	// its data.
	sLtMemRow  = "localtable memory, in place"
	sRawTreeNA = "raw btree, no alloc"
	sLtPebRow  = "localtable pebble, in place"
	sRawPebNA  = "raw pebble, no alloc"
)

// hotSystems are the hot-path read systems, in column order, each with
// the system whose store it views.
var hotSystems = [][2]string{{sLtMemRow, sLtMem}, {sRawTreeNA, sRawTree}, {sLtPebRow, sLtPeb}, {sRawPebNA, sRawPeb}}

// hotView returns the hot-path read view of st named name.
func hotView(name string, st store) store {
	switch st := st.(type) {
	case *ltStore:
		return &rowStore{ltStore: st, label: name}
	case *rawStore:
		return &reuseStore{rawStore: st, label: name}
	}
	panic("no hot-path view of " + st.name())
}

// embedded runs the embedded workloads on one data set.
type embedded struct {
	cfg    config
	dir    string
	logf   func(format string, args ...any)
	stores []store // in column order
	res    *results
	// oneSystem is set in a -scale child (scale.go), which loads one
	// system: the index's workloads, which compare the main stores with
	// indexed ones loaded beside them, are not part of its figures.
	oneSystem bool
	// noIndex leaves out the index's workloads (-embedded-only: they have
	// a mode of their own, -index-only).
	noIndex bool
}

func (e *embedded) store(name string) store {
	for _, s := range e.stores {
		if s.name() == name {
			return s
		}
	}
	panic("no store " + name)
}

// memNow returns the live heap after a GC, and the RSS after giving free
// memory back to the OS.
func memNow() (uint64, int64) {
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, _ := procStatus(0, "VmRSS")
	return ms.HeapAlloc, rss
}

// allSystems are the embedded systems in column order.
var allSystems = []string{sLtMem, sRawTree, sLtPeb, sRawPeb, sSQLite, sBolt}

// hotNames returns the names of the hot-path read systems.
func hotNames() []string {
	out := make([]string, len(hotSystems))
	for i, h := range hotSystems {
		out[i] = h[0]
	}
	return out
}

// names returns the systems of e's stores among names, in their order.
func (e *embedded) names(names ...string) []string {
	var out []string
	for _, n := range names {
		for _, s := range e.stores {
			if s.name() == n {
				out = append(out, n)
			}
		}
	}
	return out
}

// load builds every store of systems (every one when systems is empty)
// over the data set, inserted in a shuffled order, measuring the memory
// stores' footprint on the way.
func (e *embedded) load(systems ...string) error {
	s := e.cfg.Data
	want := func(name string) bool { return len(systems) == 0 || slices.Contains(systems, name) }
	order := shuffled(s.n(), 1)
	timed := func(name string, f func() (store, error)) error {
		start := time.Now()
		st, err := f()
		if err != nil {
			return fmt.Errorf("loading %s: %w", name, err)
		}
		e.logf("loaded %-18s %d entities in %.1fs", name, s.n(), time.Since(start).Seconds())
		e.stores = append(e.stores, st)
		return nil
	}
	mem := func(name string, f func() (store, error)) error {
		h0, r0 := memNow()
		err := timed(name, f)
		h1, r1 := memNow()
		e.res.Memory = append(e.res.Memory, memFigure{System: name, Entities: s.n(),
			HeapPerEntity: float64(int64(h1)-int64(h0)) / float64(s.n()),
			RSSPerEntity:  float64(r1-r0) / float64(s.n())})
		return err
	}
	var lt *ltStore
	if want(sLtMem) || want(sRawTree) || want(sRawPeb) {
		// The raw engines hold the records of the memory store.
		if err := mem(sLtMem, func() (store, error) {
			var err error
			lt, err = newLocaltable(sLtMem, "", s, order)
			return lt, err
		}); err != nil {
			return err
		}
	}
	var rec *records
	if want(sRawTree) || want(sRawPeb) {
		var err error
		if rec, err = captureRecords(lt, s); err != nil {
			return err
		}
	}
	if want(sRawTree) {
		if err := mem(sRawTree, func() (store, error) { return newRawMemory(rec, s, order) }); err != nil {
			return err
		}
	}
	sub := func(name string) string { return filepath.Join(e.dir, strings.ReplaceAll(name, " ", "-")) }
	for _, d := range []struct {
		name string
		open func(dir string) (store, error)
	}{
		{sLtPeb, func(dir string) (store, error) { return newLocaltable(sLtPeb, dir, s, order) }},
		{sRawPeb, func(dir string) (store, error) { return newRawPebble(dir, rec, s, order) }},
		{sSQLite, func(dir string) (store, error) { return newSQLite(dir, s, order) }},
		{sBolt, func(dir string) (store, error) { return newBolt(dir, s, order) }},
	} {
		if !want(d.name) {
			continue
		}
		dir := sub(d.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := timed(d.name, func() (store, error) { return d.open(dir) }); err != nil {
			return err
		}
	}
	if lt != nil && !want(sLtMem) {
		// Loaded for the raw engines' records only.
		for i, st := range e.stores {
			if st == store(lt) {
				e.stores = slices.Delete(e.stores, i, i+1)
				break
			}
		}
		e.res.Memory = slices.DeleteFunc(e.res.Memory, func(m memFigure) bool { return m.System == sLtMem })
		if err := lt.close(); err != nil {
			return err
		}
	}
	for _, h := range hotSystems {
		// A -scale child measures its one system.
		if want(h[1]) && !e.oneSystem {
			e.stores = append(e.stores, hotView(h[0], e.store(h[1])))
		}
	}
	return nil
}

func (e *embedded) close() {
	for _, s := range e.stores {
		if err := s.close(); err != nil {
			e.logf("closing %s: %v", s.name(), err)
		}
	}
}

// phase is one workload on one system for one round: it returns the
// operations done, the time they took, and the conflicts (contended
// update only).
type phase func(s store, round int) (ops int, took time.Duration, conflicts int, err error)

// interleave runs a workload on each of the named systems, round after
// round, each round visiting every system in turn (A, B, A, B…), and
// records the figures.
func (e *embedded) interleave(workload string, rounds int, names []string, run phase) ([]figure, error) {
	figs := make([]figure, len(names))
	conflicts := make([]int, len(names))
	order := make([]int, len(names))
	for r := range rounds {
		// Every other round runs the systems in the reverse order, so
		// that the background work one leaves behind (pebble's flushes
		// and compactions; runtime.GC below takes the heap's) does not
		// fall on the same neighbour every round.
		for j := range order {
			order[j] = j
			if r%2 == 1 {
				order[j] = len(order) - 1 - j
			}
		}
		for _, j := range order {
			name := names[j]
			s := e.store(name)
			runtime.GC()
			ops, took, c, err := run(s, r)
			if err != nil {
				return nil, fmt.Errorf("%s on %s: %w", workload, name, err)
			}
			figs[j].NsPerOp = append(figs[j].NsPerOp, float64(took.Nanoseconds())/float64(ops))
			figs[j].Ops = append(figs[j].Ops, ops)
			conflicts[j] += c
		}
	}
	for j := range figs {
		figs[j].Workload, figs[j].System = workload, names[j]
		figs[j].Median = median(figs[j].NsPerOp)
		if total := sum(figs[j].Ops); conflicts[j] > 0 && total > 0 {
			figs[j].Conflicts = float64(conflicts[j]) / float64(total)
		}
		e.logf("%-34s %-18s %s/op (rounds %s)", workload, names[j], fmtNs(figs[j].Median), fmtRounds(figs[j].NsPerOp))
	}
	e.res.Embedded = append(e.res.Embedded, figs...)
	return figs, nil
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// simple adapts a per-operation function to a phase that runs it for the
// configured time.
func (e *embedded) simple(max int, op func(s store, round, i int) error) phase {
	return func(s store, round int) (int, time.Duration, int, error) {
		n, took, err := runFor(e.cfg.Phase, max, func(i int) error { return op(s, round, i) })
		return n, took, 0, err
	}
}

// writes adapts a write operation that inserts perOp entities to a phase
// that runs it for the configured time, in chunks that insert at most a
// tenth of the data set: after each chunk it removes (untimed) what the
// chunk inserted, so that the store stays within 10% of the data set's
// size and is back at it when the phase ends. written returns the
// entities of operation i, by partition.
func (e *embedded) writes(max, perOp int, op func(s store, round, i int) error, written func(round, i int) (string, []string)) phase {
	chunk := max1(e.cfg.Data.n() / 10 / perOp)
	return func(s store, round int) (int, time.Duration, int, error) {
		done, took := 0, time.Duration(0)
		for done < max && (done == 0 || took < e.cfg.Phase) {
			from := done
			n, t, err := runFor(e.cfg.Phase-took, min(chunk, max-done), func(i int) error { return op(s, round, from+i) })
			done, took = done+n, took+t
			if err != nil {
				return done, took, 0, err
			}
			if err := removeWritten(s, n, func(i int) (string, []string) { return written(round, from+i) }); err != nil {
				return done, took, 0, err
			}
		}
		return done, took, 0, nil
	}
}

// removeWritten removes the entities of operations 0..n-1, grouped by
// partition.
func removeWritten(s store, n int, written func(i int) (string, []string)) error {
	byPart := map[string][]string{}
	var order []string
	for i := range n {
		p, rks := written(i)
		if _, ok := byPart[p]; !ok {
			order = append(order, p)
		}
		byPart[p] = append(byPart[p], rks...)
	}
	for _, p := range order {
		if err := s.remove(p, byPart[p]); err != nil {
			return fmt.Errorf("removing what %s inserted: %w", s.name(), err)
		}
	}
	return nil
}

// run runs every embedded workload.
func (e *embedded) run() error {
	cfg, s := e.cfg, e.cfg.Data
	all := e.names(allSystems...)
	// The get, the range and the full scan also run on the hot-path views.
	reads := e.names(append(slices.Clone(allSystems), hotNames()...)...)
	durable := e.names(sLtPeb, sRawPeb, sSQLite, sBolt)

	// Reopen: close and open each store on disk, and read one entity.
	if _, err := e.interleave(wReopen, max(cfg.Rounds, 5), durable, func(st store, _ int) (int, time.Duration, int, error) {
		start := time.Now()
		err := st.(reopener).reopen(pk(1%s.Parts), rk(7))
		return 1, time.Since(start), 0, err
	}); err != nil {
		return err
	}

	// Reads of existing entities at random.
	const nkeys = 1 << 14
	getKeys := make([][2]string, nkeys)
	for i, x := range pick(nkeys, s.n(), 2) {
		getKeys[i][0], getKeys[i][1] = s.keys(x)
	}
	if _, err := e.interleave(wGet, cfg.Rounds, reads, e.simple(cfg.MaxOps, func(st store, _, i int) error {
		k := getKeys[i%nkeys]
		return st.get(k[0], k[1])
	})); err != nil {
		return err
	}

	type rng struct{ pk, lo, hi string }
	ranges := make([]rng, nkeys)
	parts, starts := pick(nkeys, s.Parts, 3), pick(nkeys, max(1, s.Rows-100), 4)
	for i := range ranges {
		ranges[i] = rng{pk(parts[i]), rk(starts[i]), rk(starts[i] + 100)}
	}
	if _, err := e.interleave(wRange, cfg.Rounds, reads, e.simple(cfg.MaxOps, func(st store, _, i int) error {
		q := ranges[i%nkeys]
		n, err := st.rangeQuery(q.pk, q.lo, q.hi)
		if err == nil && n != min(100, s.Rows) {
			err = errCount(wRange, n, 100)
		}
		return err
	})); err != nil {
		return err
	}

	matches := make([]int, s.Parts)
	for p := range matches {
		matches[p] = s.ageMatches(p)
	}
	if _, err := e.interleave(wPart, cfg.Rounds, all, e.simple(cfg.MaxOps, func(st store, _, i int) error {
		p := parts[i%nkeys]
		n, err := st.partitionFilter(pk(p))
		want := s.Rows
		if st.filters() {
			want = matches[p]
		}
		if err == nil && n != want {
			err = errCount(wPart, n, want)
		}
		return err
	})); err != nil {
		return err
	}

	fullWant := s.scoreMatches()
	if _, err := e.interleave(wFull, cfg.Rounds, reads, e.simple(cfg.MaxOps, func(st store, _, _ int) error {
		n, err := st.fullFilter()
		want := s.n()
		if st.filters() {
			want = fullWant
		}
		if err == nil && n != want {
			err = errCount(wFull, n, want)
		}
		return err
	})); err != nil {
		return err
	}

	if err := e.orPlan(); err != nil {
		return err
	}
	if !e.oneSystem && !e.noIndex {
		if err := e.indexWorkloads(); err != nil { // index.go
			return err
		}
	}

	// Writes under new keys: each round has keys of its own, the same for
	// every system. They are made before the timed loops.
	pks := make([]string, s.Parts)
	for p := range pks {
		pks[p] = pk(p)
	}
	if err := e.insertWorkload(all, pks); err != nil {
		return err
	}
	nTx := max(1, cfg.MaxOps/100)
	txKeys := make([][][]string, cfg.Rounds)
	for r := range txKeys {
		txKeys[r] = make([][]string, nTx)
		for i := range txKeys[r] {
			rks := make([]string, 100)
			for j := range rks {
				rks[j] = "t" + pad(r, 2) + "-" + pad(i, 6) + "-" + pad(j, 3)
			}
			txKeys[r][i] = rks
		}
	}
	if _, err := e.interleave(wTx100, cfg.Rounds, all, e.writes(nTx, 100, func(st store, round, i int) error {
		return st.tx100(pks[i%s.Parts], txKeys[round][i])
	}, func(round, i int) (string, []string) { return pks[i%s.Parts], txKeys[round][i] })); err != nil {
		return err
	}

	upd := e.names(sLtMem, sLtPeb, sSQLite, sBolt)
	_, err := e.interleave(wUpdate, cfg.Rounds, upd, func(st store, _ int) (int, time.Duration, int, error) {
		return contended(st.(updater), cfg.Workers, cfg.Phase, pk(0), rk(0))
	})
	return err
}

// insertWorkload runs the single insert on the named systems, round
// after round, spread over the partitions pks, each round under RowKeys
// of its own, the same for every system, made before the timed loops.
func (e *embedded) insertWorkload(names, pks []string) error {
	cfg := e.cfg
	insKeys := make([][]string, cfg.Rounds)
	for r := range insKeys {
		insKeys[r] = make([]string, cfg.MaxOps)
		for i := range insKeys[r] {
			insKeys[r][i] = "i" + pad(r, 2) + "-" + pad(i, 7)
		}
	}
	_, err := e.interleave(wInsert, cfg.Rounds, names, e.writes(cfg.MaxOps, 1, func(st store, round, i int) error {
		return st.insert(pks[i%len(pks)], insKeys[round][i])
	}, func(round, i int) (string, []string) { return pks[i%len(pks)], insKeys[round][i : i+1] }))
	return err
}

// contended runs workers goroutines updating one entity for d, and
// returns the successful updates, the time, and the conflicts.
func contended(u updater, workers int, d time.Duration, pk, rk string) (int, time.Duration, int, error) {
	var ops, conflicts atomic.Int64
	var firstErr error
	var once sync.Once
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first := true; first || time.Now().Before(deadline); first = false {
				c, err := u.update(pk, rk)
				conflicts.Add(int64(c))
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				ops.Add(1)
			}
		}()
	}
	wg.Wait()
	return int(ops.Load()), time.Since(start), int(conflicts.Load()), firstErr
}

// slowPlan is the plan time above which an or filter is planned only once.
const slowPlan = 2 * time.Second

// orFilter is a filter of n or-ed point lookups of distinct entities of
// the data set (fewer if the data set has fewer), and their keys.
func orFilter(s shape, n int) (string, [][2]string) {
	terms := make([]string, 0, n)
	var keys [][2]string
	seen := map[[2]int]bool{}
	for i := 0; len(terms) < n && i < 100*n; i++ {
		p, r := i*7%s.Parts, (i*197+17)%s.Rows
		if seen[[2]int{p, r}] {
			continue
		}
		seen[[2]int{p, r}] = true
		keys = append(keys, [2]string{pk(p), rk(r)})
		terms = append(terms, "(PartitionKey eq '"+pk(p)+"' and RowKey eq '"+rk(r)+"')")
	}
	return strings.Join(terms, " or "), keys
}

// orPlan measures filters of N or-ed point lookups: parsing, planning
// (KeyRanges, on freshly parsed filters, since a filter keeps its plan),
// and the query on localtable's engines against as many gets on the bare
// btree.
func (e *embedded) orPlan() error {
	s := e.cfg.Data
	for _, n := range e.cfg.OrTerms {
		text, keys := orFilter(s, n)
		terms := len(keys)
		parsed, err := filter.ParseWithOptions(text, nil)
		if err != nil {
			return err
		}
		// The first plan is timed on its own: when it is slow (the
		// planner's cost grows faster than the terms), the later rounds
		// reuse its time instead of planning again.
		t0 := time.Now()
		rs, ok := parsed.KeyRanges()
		firstPlan := time.Since(t0)
		if !ok || len(rs) != terms {
			return fmt.Errorf("or of %d points: %d key ranges (bounded %v)", terms, len(rs), ok)
		}
		pool := max(4, 20000/n)
		label := fmt.Sprintf("or of %d point lookups", terms)
		var res []figure
		for r := range e.cfg.Rounds {
			// Parse.
			var fresh []*filter.Filter
			nParse, tParse, err := runFor(e.cfg.Phase, pool, func(int) error {
				f, err := filter.ParseWithOptions(text, nil)
				fresh = append(fresh, f)
				return err
			})
			if err != nil {
				return err
			}
			// Plan, on the filters just parsed.
			nPlan, tPlan := 1, firstPlan
			if firstPlan < slowPlan {
				nPlan, tPlan, err = runFor(e.cfg.Phase, len(fresh), func(i int) error {
					if _, ok := fresh[i].KeyRanges(); !ok {
						return fmt.Errorf("%s: not bounded", label)
					}
					return nil
				})
				if err != nil {
					return err
				}
			} else if r == 0 {
				e.logf("%s: one plan took %v; later rounds reuse that figure", label, firstPlan.Round(time.Millisecond))
			}
			times := []struct {
				what string
				n    int
				t    time.Duration
			}{{"parse", nParse, tParse}, {"plan", nPlan, tPlan}}
			for _, sys := range e.names(sLtMem, sLtPeb, sRawTree) {
				st := e.store(sys)
				runtime.GC()
				n, t, err := runFor(e.cfg.Phase, e.cfg.MaxOps, func(int) error {
					if lt, ok := st.(*ltStore); ok {
						got, err := lt.count(parsed)
						if err == nil && got != terms {
							err = errCount(label, got, terms)
						}
						return err
					}
					for _, k := range keys {
						if err := st.get(k[0], k[1]); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return err
				}
				what := "query, " + sys
				if sys == sRawTree {
					what = fmt.Sprintf("%d gets, %s", terms, sys)
				}
				times = append(times, struct {
					what string
					n    int
					t    time.Duration
				}{what, n, t})
			}
			if r == 0 {
				res = make([]figure, len(times))
			}
			for j, x := range times {
				res[j].Workload, res[j].System = label, x.what
				res[j].NsPerOp = append(res[j].NsPerOp, float64(x.t.Nanoseconds())/float64(x.n))
				res[j].Ops = append(res[j].Ops, x.n)
			}
		}
		for j := range res {
			res[j].Median = median(res[j].NsPerOp)
			e.logf("%-34s %-18s %s/op", label, res[j].System, fmtNs(res[j].Median))
		}
		e.res.OrPlan = append(e.res.OrPlan, res...)
	}
	return nil
}

// embeddedOnly runs only the embedded workloads but the index's (load,
// reads, or filters, writes), keeping the other figures of out's
// results.json, and writes the outputs.
func embeddedOnly(cfg config, out, doc, cmd string, logf func(string, ...any)) error {
	return measureApart(cfg, out, doc, cmd, "localtable-bench-embedded-", func(res *results, work, version string) error {
		// The report describes the embedded figures with the run's
		// configuration: they must have been measured under it.
		if k := res.Config; len(res.Embedded) > 0 && (k.Data != cfg.Data || k.Rounds != cfg.Rounds || k.Phase != cfg.Phase) {
			return fmt.Errorf("-embedded-only: %s/results.json was measured with %d entities, %d rounds of %v, not %d, %d of %v: write elsewhere (-out)",
				out, k.Data.n(), k.Rounds, k.Phase, cfg.Data.n(), cfg.Rounds, cfg.Phase)
		}
		apart := &apartRun{Command: cmd, Version: version, Started: time.Now().UTC(), LoadStart: loadAvg()}
		fresh := &results{}
		e := &embedded{cfg: cfg, dir: work, logf: logf, res: fresh, noIndex: true}
		defer e.close()
		if err := e.load(); err != nil {
			return err
		}
		if err := e.run(); err != nil {
			return err
		}
		apart.LoadEnd = loadAvg()
		res.Embedded, res.Memory, res.OrPlan, res.EmbeddedApart = fresh.Embedded, fresh.Memory, fresh.OrPlan, apart
		return nil
	})
}
