package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
)

// The index build's workloads (issue 21; the index's queries and writes are in index.go): how fast an index is built on a
// table that already holds IndexEntities entities, what it costs in bytes
// per entry, and what a build does to the p99 of writers writing into the
// table meanwhile. On each engine: the table is loaded (pebble without
// fsync, then reopened with it), an index on Score (a Double) is built
// with nothing else running (the build rate and the bytes), then in each
// round writers replace random entities (changing Score, so the index is
// kept) for a phase alone, then for a phase while RebuildIndex builds the
// index again from the table: the same writers, the same index kept, with
// and without a build beside them.

// indexBuildWriters is how many goroutines write during the index rounds.
const indexBuildWriters = 4

// indexBuildResults are the figures of the index workloads.
type indexBuildResults struct {
	// Command and Version say how and on what the figures were made when
	// they were measured apart from the rest of the run (-index-build-only).
	Command   string             `json:"command,omitempty"`
	Version   string             `json:"version,omitempty"`
	Started   time.Time          `json:"started"`
	Rounds    int                `json:"rounds"`
	Entities  int                `json:"entities"`
	Writers   int                `json:"writers"`
	LoadStart string             `json:"loadavg_start,omitempty"`
	LoadEnd   string             `json:"loadavg_end,omitempty"`
	Engines   []indexBuildEngine `json:"engines"`
}

// indexBuildEngine is what one engine measured.
type indexBuildEngine struct {
	System      string  `json:"system"`
	LoadSeconds float64 `json:"load_seconds"`
	// BuildSeconds is the build with nothing else running; BuildRate its
	// entities a second.
	BuildSeconds float64 `json:"build_seconds"`
	BuildRate    float64 `json:"build_entities_per_second"`
	// Entries is the index's entries after that build; EntryBytes their
	// keys' bytes (the value is empty) a piece; HeapPerEntry (memory) the
	// live heap it added, after a GC, per entry; DiskPerEntry (pebble)
	// the sstable bytes it added once flushed (compressed, not compacted).
	Entries      int     `json:"entries"`
	EntryBytes   float64 `json:"entry_key_bytes"`
	HeapPerEntry float64 `json:"heap_bytes_per_entry,omitempty"`
	DiskPerEntry float64 `json:"disk_bytes_per_entry,omitempty"`
	// Per round: the writers' p50 and p99 and writes a second alone and
	// beside the rebuild, and the rebuild's entities a second.
	AloneP50   []float64 `json:"alone_p50_ns"`
	AloneP99   []float64 `json:"alone_p99_ns"`
	AloneRate  []float64 `json:"alone_writes_per_second"`
	BuildP50   []float64 `json:"during_p50_ns"`
	BuildP99   []float64 `json:"during_p99_ns"`
	BuildWRate []float64 `json:"during_writes_per_second"`
	Rebuild    []float64 `json:"rebuild_entities_per_second"`
	// P99Ratio is the median over rounds of each round's p99 beside the
	// build ÷ alone.
	P99Ratio float64 `json:"p99_ratio"`
}

// runIndex runs the index workloads on memory and pebble, with stores in
// work.
func runIndexBuild(cfg config, work string, logf func(string, ...any)) (*indexBuildResults, error) {
	ir := &indexBuildResults{Started: time.Now().UTC(), Rounds: cfg.Rounds, Entities: indexBuildShape(cfg.IndexBuildEntities).n(), Writers: indexBuildWriters, LoadStart: loadAvg()}
	defer func() { ir.LoadEnd = loadAvg() }()
	for _, name := range []string{sLtMem, sLtPeb} {
		dir := ""
		if name == sLtPeb {
			dir = filepath.Join(work, "index-build")
		}
		ie, err := indexBuildEngineRun(cfg, name, dir, logf)
		if err != nil {
			return nil, fmt.Errorf("index build on %s: %w", name, err)
		}
		ir.Engines = append(ir.Engines, *ie)
		runtime.GC()
	}
	return ir, nil
}

// indexBuildShape is the data set of n entities: partitions of 2,000 rows.
func indexBuildShape(n int) shape { return shape{Parts: (n + 1999) / 2000, Rows: min(n, 2000)} }

func indexBuildEngineRun(cfg config, name, dir string, logf func(string, ...any)) (*indexBuildEngine, error) {
	ie := &indexBuildEngine{System: name}
	s := indexBuildShape(cfg.IndexBuildEntities)
	n := s.n()
	st, err := openLtStore(name, dir, dir != "", nil)
	if err != nil {
		return nil, err
	}
	closed := false
	defer func() {
		if !closed {
			st.close()
		}
	}()
	t0 := time.Now()
	for start := 0; start < n; start += 100 {
		acts := make([]localtable.Action, 0, 100)
		for i := start; i < min(start+100, n); i++ {
			r := s.makeRow(i)
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: r.entity()})
		}
		if _, err := st.tbl.Transact(ctx, acts); err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
	}
	ie.LoadSeconds = time.Since(t0).Seconds()
	logf("index: %s entities loaded on %s in %.1fs", fmtInt(n), name, ie.LoadSeconds)
	if dir != "" { // reopened with each commit fsynced, as the writers want it
		closed = true
		if err := st.acct.Close(); err != nil {
			return nil, err
		}
		acct, eng, err := openLocaltable(dir, false, nil)
		if err != nil {
			return nil, err
		}
		st.acct, st.eng, st.tbl, closed = acct, eng, acct.Table(tableName), false
	}

	// The build alone, and what its entries take.
	heap0 := liveHeap()
	disk0, err := sstBytes(st.eng, dir)
	if err != nil {
		return nil, err
	}
	t0 = time.Now()
	if err := st.tbl.CreateIndex(ctx, "byScore", "Score"); err != nil {
		return nil, err
	}
	ie.BuildSeconds = time.Since(t0).Seconds()
	ie.BuildRate = float64(n) / ie.BuildSeconds
	heap1 := liveHeap()
	disk1, err := sstBytes(st.eng, dir)
	if err != nil {
		return nil, err
	}
	entries, keyBytes, err := indexKeyBytes(st.eng)
	if err != nil {
		return nil, err
	}
	if entries != n {
		return nil, fmt.Errorf("the index has %d entries; want %d", entries, n)
	}
	ie.Entries, ie.EntryBytes = entries, float64(keyBytes)/float64(entries)
	if dir == "" {
		ie.HeapPerEntry = float64(heap1-heap0) / float64(entries)
	} else {
		ie.DiskPerEntry = float64(disk1-disk0) / float64(entries)
	}
	logf("index: built on %s in %.1fs: %s entities/s; %.0f key bytes an entry, %.0f heap, %.0f disk", name, ie.BuildSeconds, fmtInt(int(ie.BuildRate)), ie.EntryBytes, ie.HeapPerEntry, ie.DiskPerEntry)

	// Rounds: writers alone, then writers beside a rebuild, for as long as
	// the rebuild takes (the alone phase as long as the last one did).
	phase := time.Duration(ie.BuildSeconds * float64(time.Second))
	var ratios []float64
	for round := range cfg.Rounds {
		lat, took := indexBuildWrite(s, st.tbl, round, func(stop <-chan struct{}) error {
			select {
			case <-stop:
			case <-time.After(phase):
			}
			return nil
		})
		p50, p99 := quantile(lat, 0.5), quantile(lat, 0.99)
		ie.AloneP50, ie.AloneP99 = append(ie.AloneP50, float64(p50)), append(ie.AloneP99, float64(p99))
		ie.AloneRate = append(ie.AloneRate, float64(len(lat))/took.Seconds())
		var rebuild time.Duration
		var rerr error
		lat, took = indexBuildWrite(s, st.tbl, round, func(<-chan struct{}) error {
			t := time.Now()
			rerr = st.tbl.RebuildIndex(ctx, "byScore")
			rebuild = time.Since(t)
			return rerr
		})
		if rerr != nil {
			return nil, rerr
		}
		phase = rebuild
		bp50, bp99 := quantile(lat, 0.5), quantile(lat, 0.99)
		ie.BuildP50, ie.BuildP99 = append(ie.BuildP50, float64(bp50)), append(ie.BuildP99, float64(bp99))
		ie.BuildWRate = append(ie.BuildWRate, float64(len(lat))/took.Seconds())
		ie.Rebuild = append(ie.Rebuild, float64(n)/rebuild.Seconds())
		ratios = append(ratios, float64(bp99)/float64(p99))
		logf("index: %s round %d: writers alone p50 %s p99 %s (%.0f/s); beside the rebuild (%.1fs) p50 %s p99 %s (%.0f/s)", name, round, fmtNs(float64(p50)), fmtNs(float64(p99)), ie.AloneRate[round], rebuild.Seconds(), fmtNs(float64(bp50)), fmtNs(float64(bp99)), ie.BuildWRate[round])
	}
	ie.P99Ratio = median(ratios)
	rep, err := st.acct.Verify(ctx)
	if err != nil {
		return nil, err
	}
	if !rep.OK() {
		return nil, fmt.Errorf("verify after the rounds: %v %v", rep.Problems, rep.Tables)
	}
	return ie, nil
}

// indexWrite runs indexBuildWriters writers replacing random entities of s
// with a new Score until phase returns, and returns their latencies,
// sorted, and the phase's wall time. A failing write stops the run: it
// panics, as the rest of the program stops on a wrong result.
func indexBuildWrite(s shape, tbl *localtable.Table, round int, phase func(stop <-chan struct{}) error) ([]time.Duration, time.Duration) {
	stop := make(chan struct{})
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	var werr error
	for w := range indexBuildWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
			var lat []time.Duration
			for {
				select {
				case <-stop:
					mu.Lock()
					all = append(all, lat...)
					mu.Unlock()
					return
				default:
				}
				r := s.makeRow(rng.IntN(s.n()))
				r.Score = rng.Float64() * 100
				e := r.entity()
				t := time.Now()
				if _, err := tbl.Upsert(ctx, e, nil); err != nil {
					mu.Lock()
					werr = err
					mu.Unlock()
					<-stop
					return
				}
				lat = append(lat, time.Since(t))
			}
		}()
	}
	t0 := time.Now()
	perr := phase(stop)
	close(stop)
	took := time.Since(t0)
	wg.Wait()
	if werr != nil || perr != nil {
		panic(fmt.Sprintf("index writers: %v; phase: %v", werr, perr))
	}
	slices.Sort(all)
	return all, took
}

// liveHeap is the live heap after a GC.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// sstBytes flushes a pebble engine's memtable and returns the bytes of
// its sstables in dir; 0 for the memory engine.
func sstBytes(eng storage.Engine, dir string) (int64, error) {
	db, ok := eng.(*pebble.DB)
	if !ok || dir == "" {
		return 0, nil
	}
	if err := db.Flush(); err != nil {
		return 0, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil {
		return 0, err
	}
	var size int64
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return 0, err
		}
		size += fi.Size()
	}
	return size, nil
}

// indexKeyBytes counts the index entries of eng and their keys' bytes.
func indexKeyBytes(eng storage.Engine) (int, int, error) {
	it, err := eng.NewIter(&storage.IterOptions{LowerBound: []byte{keyenc.PrefixIndex}, UpperBound: []byte{keyenc.PrefixIndex + 1}})
	if err != nil {
		return 0, 0, err
	}
	n, size := 0, 0
	for it.First(); it.Valid(); it.Next() {
		n++
		size += len(it.Key()) + len(it.Value())
	}
	if err := it.Error(); err != nil {
		it.Close()
		return 0, 0, err
	}
	return n, size, it.Close()
}

// indexBuildOnly runs the index workloads alone and writes the outputs
// again, with the other figures of out/results.json kept.
func indexBuildOnly(cfg config, out, doc string, cmd string, logf func(string, ...any)) error {
	return measureApart(cfg, out, doc, cmd, "localtable-bench-index-build-", func(res *results, work, version string) error {
		ir, err := runIndexBuild(cfg, work, logf)
		if err != nil {
			return err
		}
		ir.Command, ir.Version = cmd, version
		res.IndexBuild = ir
		return nil
	})
}

// indexBuildMarkdown renders the section "Building an index" of the report.
func indexBuildMarkdown(res *results) string {
	f := res.IndexBuild
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## Building an index\n\n")
	if f.Command != "" {
		p("Measured apart from the rest of the report, on %s (localtable %s), with:\n\n```sh\n%s\n```\n\n", f.Started.Format("2006-01-02"), f.Version, f.Command)
	}
	p("A table of %s entities (the data set's, in partitions of 2,000) gets an index on `Score` (a Double): `CreateIndex` builds it in steps of 1,000 entities, each one commit, with nothing else running. ", fmtInt(f.Entities))
	p("Then, in %d rounds, %d goroutines replace random entities with a new Score (so every write also moves its index entry), first alone, then beside `RebuildIndex`, which deletes the index's entries and builds it again from the table (the writers keep it meanwhile): the p99 of the same writes with and without a build beside them. pebble fsyncs each commit (the load was made without, then the store reopened).\n\n", f.Rounds, f.Writers)
	p("| | memory | pebble |\n|---|---|---|\n")
	row := func(label string, cell func(e indexBuildEngine) string) {
		p("| %s |", label)
		for _, e := range f.Engines {
			p(" %s |", cell(e))
		}
		p("\n")
	}
	row("build alone", func(e indexBuildEngine) string {
		return fmt.Sprintf("%s entities/s (%.1f s)", fmtInt(int(e.BuildRate)), e.BuildSeconds)
	})
	row("rebuild beside the writers (median of rounds)", func(e indexBuildEngine) string {
		return fmt.Sprintf("%s entities/s", fmtInt(int(median(e.Rebuild))))
	})
	row("writers' p99: alone → beside the build", func(e indexBuildEngine) string {
		return fmt.Sprintf("%s → %s (**%.2f×**)", fmtNs(median(e.AloneP99)), fmtNs(median(e.BuildP99)), e.P99Ratio)
	})
	row("writers' p50: alone → beside the build", func(e indexBuildEngine) string {
		return fmt.Sprintf("%s → %s", fmtNs(median(e.AloneP50)), fmtNs(median(e.BuildP50)))
	})
	row("writes a second: alone → beside the build", func(e indexBuildEngine) string {
		return fmt.Sprintf("%s → %s", fmtInt(int(median(e.AloneRate))), fmtInt(int(median(e.BuildWRate))))
	})
	row("an entry's key", func(e indexBuildEngine) string { return fmt.Sprintf("%.0f bytes", e.EntryBytes) })
	row("what an entry costs", func(e indexBuildEngine) string {
		if e.HeapPerEntry > 0 {
			return fmt.Sprintf("%.0f bytes of live heap", e.HeapPerEntry)
		}
		return fmt.Sprintf("%.0f bytes of sstable (flushed, compressed, not compacted)", e.DiskPerEntry)
	})
	p("\nThe p99 ratio is the median over the rounds of each round's p99 beside the build ÷ alone. ")
	p("A build step holds the writes (of its process) into the partitions of the 1,000 entities it indexes while it reads them again and commits their entries, one commit of about 1,000 keys (fsynced on pebble); writes into the other partitions go on. The writers here pick entities over all the table's partitions, so few wait for a step: what moves their p99 and their rate is the machine the build shares with them (2 cores, and on pebble the log's fsyncs, which the build's large commits lengthen). No write fails.")
	if f.LoadStart != "" {
		p(" The machine's load average (1, 5, 15 min) was %s when these workloads began and %s when they ended.", f.LoadStart, f.LoadEnd)
	}
	p("\n\n")
	return b.String()
}
