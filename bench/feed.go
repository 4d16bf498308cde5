package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/feedbench"
)

// The change feed's workloads: what keeping the feed costs a write (the
// single insert, the transaction of 100 and the replace of one entity on
// accounts with the feed off and on, interleaved), how long a change takes to reach 1 and 100
// watchers, and how fast a watcher catches up from far behind. The
// latency and the catch-up are measured by internal/feedbench, as the go
// test benchmarks of tests/feed_bench_test.go measure them.

// The feed's systems: each engine with the feed off and on.
const (
	sMemOff = "localtable memory, feed off"
	sMemOn  = "localtable memory, feed on"
	sPebOff = "localtable pebble, feed off"
	sPebOn  = "localtable pebble, feed on"

	wCatchUp = "catch-up"
	// wReplace replaces an entity: what the feed costs moves there on
	// pebble, where a write that replaces an entity the feed names keeps
	// a copy of it.
	wReplace = "replace"
)

// feedResults are the figures of the feed's workloads.
type feedResults struct {
	// Command and Version say how and on what the figures were made when
	// they were measured apart from the rest of the run (-feed-only).
	Command string    `json:"command,omitempty"`
	Version string    `json:"version,omitempty"`
	Started time.Time `json:"started"`
	Rounds  int       `json:"rounds"`
	// WriteRounds is how many rounds the write cost ran (config's
	// FeedWriteRounds; Rounds when 0, in results made before it).
	WriteRounds int     `json:"write_rounds,omitempty"`
	Phase       float64 `json:"phase_seconds"`
	// LoadStart and LoadEnd are /proc/loadavg when the feed's workloads
	// began and ended.
	LoadStart string `json:"loadavg_start,omitempty"`
	LoadEnd   string `json:"loadavg_end,omitempty"`
	// Write has the single insert and the transaction of 100 on each of
	// the four systems (sMemOff…).
	Write []figure `json:"write"`
	// Latency has one figure per engine and number of watchers.
	Latency []latencyFigure `json:"latency"`
	// CatchUp has, per engine (localtable memory, localtable pebble),
	// the time per change of a watcher reading CatchUpChanges from the
	// oldest; BytesPerChange what the feed keeps per change (its records,
	// keys included) for those changes.
	CatchUpChanges int                `json:"catch_up_changes"`
	CatchUp        []figure           `json:"catch_up"`
	BytesPerChange map[string]float64 `json:"bytes_per_change"`
}

// latencyFigure is the delivery latency on one engine to a number of
// watchers: per round, the 50th and 99th percentiles of the time from an
// insert's return until every watcher has its change, over Writes
// inserts made one at a time; Med* are the medians over rounds.
type latencyFigure struct {
	System   string    `json:"system"`
	Watchers int       `json:"watchers"`
	Writes   int       `json:"writes"`
	P50Ns    []float64 `json:"p50_ns"`
	P99Ns    []float64 `json:"p99_ns"`
	MedP50   float64   `json:"median_p50_ns"`
	MedP99   float64   `json:"median_p99_ns"`
}

// runFeed runs the feed's workloads, with stores in work.
func runFeed(cfg config, work string, logf func(string, ...any)) (*feedResults, error) {
	fr := &feedResults{Started: time.Now().UTC(), Rounds: cfg.Rounds, WriteRounds: cfg.FeedWriteRounds, Phase: cfg.Phase.Seconds(), CatchUpChanges: cfg.FeedCatchUp,
		BytesPerChange: map[string]float64{}, LoadStart: loadAvg()}
	defer func() { fr.LoadEnd = loadAvg() }()
	if err := feedWrites(cfg, work, logf, fr); err != nil {
		return nil, err
	}
	if err := feedLatency(cfg, work, logf, fr); err != nil {
		return nil, err
	}
	if err := feedCatchUp(cfg, work, logf, fr); err != nil {
		return nil, err
	}
	return fr, nil
}

// feedWrites measures the single insert, the transaction of 100 and the
// replace with the feed off and on, on each engine: in each round, two
// accounts of the engine, one with the feed off and one with it on, both
// new and empty, take turns in slices of feedSlice (pairedRun), and each
// one's time per operation is that of its slices; the accounts are then
// closed (untimed) and removed.
//
// The turns are what makes the ratio measurable on a shared machine of 2
// cores: phases of a system each, 700 ms apiece, gave per-round ratios
// from 0.8 to 1.5 for a cost of about 1.1, since the machine's speed
// moves by more than that from one phase to the next; slices of a few
// milliseconds see the same machine. Work a system leaves to the
// background (the collector's marking, pebble's flushes and compactions)
// runs beside both: on 2 cores, mostly on the one the writes leave idle.
func feedWrites(cfg config, work string, logf func(string, ...any), fr *feedResults) error {
	rows := make([]string, 1000)
	for i := range rows {
		rows[i] = rk(i)
	}
	type pair struct {
		off, on, dir string
	}
	pairs := []pair{{sMemOff, sMemOn, ""}, {sPebOff, sPebOn, filepath.Join(work, "feed-pebble")}}
	for _, w := range []struct {
		name    string
		prepare func(st *ltStore) error
		op      func(st *ltStore, i int) error
	}{
		{wInsert, nil, func(st *ltStore, i int) error { return st.insert(pk(i%100), "i"+pad(i, 7)) }},
		{wTx100, nil, func(st *ltStore, i int) error { return st.tx100("x"+pad(i, 6), rows[:100]) }},
		// The replaces overwrite, in turn, 1,000 entities inserted first
		// (untimed), each time with the next entity's values.
		{wReplace, func(st *ltStore) error {
			for i := 0; i < len(rows); i += 100 {
				if err := st.tx100("replaced", rows[i:i+100]); err != nil {
					return err
				}
			}
			return nil
		}, func(st *ltStore, i int) error { return st.replace("replaced", rows[i%len(rows)]) }},
	} {
		for _, p := range pairs {
			figs := [2]figure{{Workload: w.name, System: p.off}, {Workload: w.name, System: p.on}}
			for r := range cfg.FeedWriteRounds {
				ops, took, err := feedPairRound(cfg, p.dir, r, figs[0].System, figs[1].System, w.prepare, w.op)
				if err != nil {
					return fmt.Errorf("%s: %w", w.name, err)
				}
				for k := range figs {
					figs[k].NsPerOp = append(figs[k].NsPerOp, float64(took[k].Nanoseconds())/float64(ops[k]))
					figs[k].Ops = append(figs[k].Ops, ops[k])
				}
			}
			for k := range figs {
				figs[k].Median = median(figs[k].NsPerOp)
				logf("%-34s %-18s %s/op (rounds %s)", w.name, figs[k].System, fmtNs(figs[k].Median), fmtRounds(figs[k].NsPerOp))
			}
			fr.Write = append(fr.Write, figs[:]...)
		}
	}
	return nil
}

// feedPairRound runs round r of a write workload on two new accounts of
// an engine (in directories beside dir, for pebble), the feed off (off)
// then on (on): prepare on each (untimed), then op on both in turns
// (pairedRun); the accounts are closed (untimed) and removed after.
func feedPairRound(cfg config, dir string, r int, off, on string, prepare func(st *ltStore) error, op func(st *ltStore, i int) error) ([2]int, [2]time.Duration, error) {
	var sts [2]*ltStore
	defer func() {
		for _, st := range sts {
			if st != nil {
				st.close()
				if st.dir != "" {
					os.RemoveAll(st.dir)
				}
			}
		}
	}()
	for k, feed := range []*localtable.FeedOptions{nil, {}} {
		label := []string{off, on}[k]
		d := ""
		if dir != "" {
			d = fmt.Sprintf("%s-%d-%02d", dir, k, r)
		}
		st, err := openLtStore(label, d, false, feed)
		if err != nil {
			return [2]int{}, [2]time.Duration{}, fmt.Errorf("%s: %w", label, err)
		}
		st.pool = variedPool
		sts[k] = st
		if prepare != nil {
			if err := prepare(st); err != nil {
				return [2]int{}, [2]time.Duration{}, fmt.Errorf("%s: %w", label, err)
			}
		}
	}
	runtime.GC()
	// The order of the turns alternates from round to round.
	return pairedRun(2*cfg.Phase, cfg.MaxOps, r%2, [2]func(i int) error{
		func(i int) error { return op(sts[0], i) },
		func(i int) error { return op(sts[1], i) },
	})
}

// feedSlice is how long one system's turn of pairedRun lasts.
const feedSlice = 5 * time.Millisecond

// pairedRun runs ops[0] and ops[1] in turns, ops[first] first, for d in
// all or until each has run max operations: a turn runs one of them for
// feedSlice (at least once), then the other as many times, the next turn
// starting with the other. It returns each one's operations and the time
// they took.
func pairedRun(d time.Duration, max, first int, ops [2]func(i int) error) ([2]int, [2]time.Duration, error) {
	var n [2]int
	var took [2]time.Duration
	start := time.Now()
	for k := first; time.Since(start) < d && n[0] < max && n[1] < max; k = 1 - k {
		// The leading system's slice sets the number of operations.
		t0 := time.Now()
		lead := 0
		for lead == 0 || time.Since(t0) < feedSlice && n[k] < max {
			if err := ops[k](n[k]); err != nil {
				return n, took, err
			}
			n[k]++
			lead++
		}
		took[k] += time.Since(t0)
		t0 = time.Now()
		for range lead {
			if n[1-k] >= max {
				break
			}
			if err := ops[1-k](n[1-k]); err != nil {
				return n, took, err
			}
			n[1-k]++
		}
		took[1-k] += time.Since(t0)
	}
	return n, took, nil
}

// variedPool has the properties the feed's write workloads write, in
// turn: the data set's first 1,000 entities', whose values differ from one
// entity to the next (as a feed record's compression sees them), where
// the other write workloads write one template.
var variedPool = func() []localtable.Properties {
	s := shape{Parts: 1, Rows: 1000}
	pool := make([]localtable.Properties, s.n())
	for i := range pool {
		r := s.makeRow(i)
		pool[i] = r.props()
	}
	return pool
}()

// feedWriteWorkloads are the feed's write workloads, in the report's order.
var feedWriteWorkloads = []string{wInsert, wTx100, wReplace}

// feedLatency measures the delivery to 1 and 100 watchers on each
// engine, interleaved, FeedDeliveries inserts per round.
func feedLatency(cfg config, work string, logf func(string, ...any), fr *feedResults) error {
	type sys struct {
		st       *ltStore
		watchers int
	}
	var systems []sys
	for _, eng := range []string{sLtMem, sLtPeb} {
		for _, w := range []int{1, 100} {
			dir := ""
			if eng == sLtPeb {
				dir = filepath.Join(work, fmt.Sprintf("feed-latency-%d", w))
			}
			st, err := openLtStore(eng, dir, false, &localtable.FeedOptions{})
			if err != nil {
				return err
			}
			defer st.close()
			systems = append(systems, sys{st, w})
			fr.Latency = append(fr.Latency, latencyFigure{System: eng, Watchers: w, Writes: cfg.FeedDeliveries})
		}
	}
	for r := range cfg.Rounds {
		for j, s := range systems {
			lat, err := feedbench.Deliveries(ctx, s.st.acct, s.st.tbl, s.watchers, cfg.FeedDeliveries, func(i int) localtable.Entity {
				return localtable.Entity{PartitionKey: "l" + pad(r, 2), RowKey: pad(i, 6), Properties: s.st.tmpl}
			})
			if err != nil {
				return fmt.Errorf("delivery on %s to %d watchers: %w", s.st.label, s.watchers, err)
			}
			slices.Sort(lat)
			f := &fr.Latency[j]
			f.P50Ns = append(f.P50Ns, float64(quantile(lat, 0.50)))
			f.P99Ns = append(f.P99Ns, float64(quantile(lat, 0.99)))
		}
	}
	for j := range fr.Latency {
		f := &fr.Latency[j]
		f.MedP50, f.MedP99 = median(f.P50Ns), median(f.P99Ns)
		logf("%-34s %-18s p50 %s, p99 %s (rounds %s; %s)", fmt.Sprintf("feed delivery, %d watcher(s)", f.Watchers), f.System, fmtNs(f.MedP50), fmtNs(f.MedP99), fmtRounds(f.P50Ns), fmtRounds(f.P99Ns))
	}
	return nil
}

// feedCatchUp fills a feed of FeedCatchUp changes on each engine (pebble
// without fsync: only the reads are timed), then times a watcher reading
// it all from the oldest, round after round, interleaved.
func feedCatchUp(cfg config, work string, logf func(string, ...any), fr *feedResults) error {
	n := cfg.FeedCatchUp
	names := []string{sLtMem, sLtPeb}
	stores := make([]*ltStore, len(names))
	last := make([]localtable.Revision, len(names))
	for i, name := range names {
		dir := ""
		if name == sLtPeb {
			dir = filepath.Join(work, "feed-catchup")
		}
		st, err := openLtStore(name, dir, true, &localtable.FeedOptions{KeepChanges: n})
		if err != nil {
			return err
		}
		defer st.close()
		acct, eng := st.acct, st.eng
		start := time.Now()
		if err := feedbench.Fill(ctx, st.tbl, "c", n); err != nil {
			return fmt.Errorf("filling the feed on %s: %w", name, err)
		}
		if last[i], err = acct.Revision(ctx); err != nil {
			return err
		}
		size, err := feedbench.StoredBytes(eng)
		if err != nil {
			return err
		}
		fr.BytesPerChange[name] = float64(size) / float64(last[i])
		logf("feed of %s changes on %s filled in %.1fs", fmtInt(n), name, time.Since(start).Seconds())
		stores[i] = st
	}
	figs := make([]figure, len(names))
	for range cfg.Rounds {
		for i, st := range stores {
			got, took, err := feedbench.CatchUp(ctx, st.acct, last[i])
			if err != nil {
				return fmt.Errorf("catch-up on %s: %w", st.label, err)
			}
			figs[i].NsPerOp = append(figs[i].NsPerOp, float64(took.Nanoseconds())/float64(got))
			figs[i].Ops = append(figs[i].Ops, got)
		}
	}
	for i := range figs {
		figs[i].Workload, figs[i].System, figs[i].Median = wCatchUp, names[i], median(figs[i].NsPerOp)
		logf("%-34s %-18s %s/change, %.0f changes/s", "feed catch-up", names[i], fmtNs(figs[i].Median), 1e9/figs[i].Median)
	}
	fr.CatchUp = figs
	return nil
}

// feedOnly runs the feed's workloads alone and writes the outputs again:
// the other figures are those of the run in out/results.json (if any),
// kept as they are.
func feedOnly(cfg config, out, doc string, cmd string, logf func(string, ...any)) error {
	return measureApart(cfg, out, doc, cmd, "localtable-bench-feed-", func(res *results, work, version string) error {
		fr, err := runFeed(cfg, work, logf)
		if err != nil {
			return err
		}
		fr.Command, fr.Version = cmd, version
		res.Feed = fr
		return nil
	})
}

// measureApart runs one section's workloads (measure, with stores in a
// directory of work of its own, told localtable's version) apart from
// the rest of the run and writes the outputs again: the other figures
// are those of the run in out/results.json (if any), kept as they are.
// It is the one way the modes that measure one part again (-feed-only,
// -index-only, -index-build-only, -scale) keep the rest.
func measureApart(cfg config, out, doc, cmd, workPrefix string, measure func(res *results, work, version string) error) error {
	res, dir, err := keptResults(cfg, out, cmd)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", workPrefix)
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := measure(res, work, versions(filepath.Dir(dir))["localtable"]); err != nil {
		return err
	}
	computeRatios(res)
	return writeOutputs(res, out, doc)
}

// keptResults returns the figures of the run in out/results.json, for
// measureApart, or, without one, empty results describing this machine
// and cfg; and the bench directory.
func keptResults(cfg config, out, cmd string) (*results, string, error) {
	dir, err := benchDir()
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(out, "results.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return &results{Mode: cfg.Mode, Started: time.Now().UTC(), Config: cfg, Machine: machineInfo(), Versions: versions(filepath.Dir(dir)), Command: cmd}, dir, nil
	}
	res := &results{}
	if err := json.Unmarshal(b, res); err != nil {
		return nil, "", fmt.Errorf("%s: %v", path, err)
	}
	return res, dir, nil
}

// feedMaxCost is the feed issue's target: keeping the feed costs a write
// at most this factor.
const feedMaxCost = 1.10

// feedMarkdown renders the section "The change feed" of the report.
func feedMarkdown(res *results) string {
	f := res.Feed
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## The change feed\n\n")
	if f.Command != "" {
		p("Measured apart from the rest of the report, on %s (localtable %s), with:\n\n```sh\n%s\n```\n\n", f.Started.Format("2006-01-02"), f.Version, f.Command)
	}
	p("**Write cost**: the same writes on accounts with `Options.Feed` off and on, on each engine, in %d rounds: in each, two new and empty accounts of the engine, the feed off and on, take turns in slices of %v (one writes for that long, the other makes as many writes, then the other way round) for %v in all, and are closed after (untimed); the writes are of the data set's first 1,000 entities in turn (under new keys: their values differ from one entity to the next, as a feed record's compression sees them); pebble fsyncs each commit. The turns make a ratio of a few percent measurable on this shared machine, whose speed moves by more than that from one phase of 700 ms to the next (phases of a system each gave per-round ratios of 0.8 to 1.5); the work a system leaves to the background (the collector's marking, pebble's compactions) runs beside both, mostly on the core the writes leave idle. ", cmp.Or(f.WriteRounds, f.Rounds), feedSlice, 2*time.Duration(f.Phase*float64(time.Second)))
	p("The ratio is feed on ÷ feed off, the median of the per-round ratios (the issue's target: at most %.2f×); the times are the medians of the rounds.\n\n", feedMaxCost)
	p("On pebble the fsync of each commit dominates the time of a write.\n\n")
	p("| | memory | pebble |\n|---|---|---|\n")
	var over []string
	for _, w := range feedWriteWorkloads {
		p("| %s |", w)
		for _, g := range []struct{ group, on, off, engine string }{{gFeedMem, sMemOn, sMemOff, "memory"}, {gFeedPeb, sPebOn, sPebOff, "pebble"}} {
			r := findRatio(res, g.group, w)
			p(" %s (%s → %s) |", fmtRatio(r), fmtNs(med(find(f.Write, w, g.off))), fmtNs(med(find(f.Write, w, g.on))))
			if r > feedMaxCost && w != wReplace {
				over = append(over, fmt.Sprintf("%s on %s", w, g.engine))
			}
		}
		p("\n")
	}
	p("\nThe target is the insert's and the transaction's. A replace with the feed on stores, on the memory engine, the new entity inside the feed record (one buffer, no copy); on pebble the record names it, and the old one, which an earlier change names, is copied instead.\n")
	p("\nWhat the feed adds to a write: on the memory engine the feed copies no entity: a commit's entities, a single write's or a transaction's, are stored inside its feed record, one buffer for them all (but an entity of a table with a covering index, which shares its entry's buffer, and the record holds a copy); what it adds is the record's head and each change's kind, table name and lengths, the record's place in the feed's log, and the commit's wake-up of the watchers. On pebble a record names its entities (their keys, compressed in one block when a commit's changes take 1 KiB or more) and an entity is copied only when a write replaces it, so the feed adds about 5 bytes a change; its own code is under 1%% of the profile of these writes. Pebble's table files hold one key space each, the feed's records are cut in files of 65,536 revisions, and each pruning deletes from where the previous one ended, so neither the feed's keys nor its pruning widen other files (write amplification of 20,000 transactions of 100 into new partitions, `BenchmarkFeedWriteAmp`: 1.93 with the feed on, 2.31 off). These ratios are wall times.\n")
	if len(over) > 0 {
		p("\nThe target is **not met** for: %s.\n", strings.Join(over, "; "))
	} else {
		p("\nThe target is met on the insert's and the transaction's rows.\n")
	}
	if len(f.Latency) == 0 {
		return b.String()
	}
	p("\n**Delivery**: from an insert's return until every watcher has its change, %s inserts made one at a time per round, in process; the median over %d rounds of each round's percentile (internal/feedbench.Deliveries, as `BenchmarkFeedLatency`).\n\n", fmtInt(f.Latency[0].Writes), f.Rounds)
	p("| | p50 | p99 |\n|---|---|---|\n")
	for _, l := range f.Latency {
		w := "watchers"
		if l.Watchers == 1 {
			w = "watcher"
		}
		p("| %s, %d %s | %s | %s |\n", strings.TrimPrefix(l.System, "localtable "), l.Watchers, w, fmtNs(l.MedP50), fmtNs(l.MedP99))
	}
	if f.LoadStart != "" {
		p("\nThe latencies and the catch-up are times, not ratios: they move with the machine's load, whose average (1, 5, 15 min) was %s when the feed's workloads began and %s when they ended.\n", f.LoadStart, f.LoadEnd)
	}
	p("\n**Catch-up**: a watcher reading the feed from its oldest change, %s changes back (written in transactions of 100 entities of one Int64 property), median of %d rounds (internal/feedbench.CatchUp, as `BenchmarkFeedCatchUp`):", fmtInt(f.CatchUpChanges), f.Rounds)
	for _, c := range f.CatchUp {
		p(" %s %s changes/s (%s);", strings.TrimPrefix(c.System, "localtable "), fmtInt(int(1e9/c.Median)), fmtNs(c.Median*float64(f.CatchUpChanges)))
	}
	p(" the feed keeps")
	for i, name := range []string{sLtMem, sLtPeb} {
		if i > 0 {
			p(" and")
		}
		p(" %.0f bytes a change on %s", f.BytesPerChange[name], strings.TrimPrefix(name, "localtable "))
	}
	p(" (its records, keys included; each commit adds 19 bytes to its changes'; on pebble the records name the entities, which the watcher reads where they are, and no write replaced them here).\n\n")
	return b.String()
}
