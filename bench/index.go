package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// The secondary index's workloads (issue 21's targets): the full-table
// filter at 1% selectivity ("Score lt 1.0") through an index on Score
// against the same filter without one, on each of localtable's engines
// and on SQLite (an index on its Score column); and the cost of the index
// on the single insert and the transaction of 100. They run on the data
// set as loaded, after the read workloads and before the write ones, on
// two localtable stores of their own loaded as the main ones are, with
// the index declared on the loaded table (its build timed), next to the
// main stores, which have none.

// The index workloads' systems.
const (
	sLtMemIx    = "localtable memory, Score index"
	sLtPebIx    = "localtable pebble, Score index"
	sSQLiteIx   = "SQLite, Score index"
	sSQLiteNoIx = "SQLite, no index"

	// The summary's groups of the index's ratios.
	gIxMem = "localtable memory: Score index ÷ none (time/op)"
	gIxPeb = "localtable pebble: Score index ÷ none (time/op)"
	gIxSQL = "Score index: localtable ÷ SQLite, Score index (time/op)"

	// hLtMemIx is the server started with serve --index on Score.
	hLtMemIx = "localtable memory, --index bench:Score"
	gIxHTTP  = "HTTP: localtable memory, --index ÷ Azurite (server CPU/op)"
	gIxHTTPL = "HTTP: localtable memory, --index ÷ no index (server CPU/op)"

	// ixIndexName is the index's name; sqliteIndexName SQLite's.
	ixIndexName     = "byScore"
	sqliteIndexName = "entities_score"
)

// Issue 21's targets.
const (
	ixMinSpeedup = 50  // the indexed filter is at least this many times faster than the scan
	ixMaxCost    = 1.5 // an index costs a write at most this many times the time without
)

// indexResults are the figures of the index's workloads.
type indexResults struct {
	// Command and Version say how and on what the figures were made when
	// they were measured apart from the rest of the run (-index-only).
	Command string `json:"command,omitempty"`
	Version string `json:"version,omitempty"`
	// Filter has the full-table filter on the index's six systems
	// (indexFilterSystems); Write the single insert and the transaction
	// of 100 on four (indexWriteSystems).
	Filter []figure `json:"filter"`
	Write  []figure `json:"write"`
	// BuildSeconds is the time to declare and build the index on the
	// loaded table, per system (SQLite: CREATE INDEX).
	BuildSeconds map[string]float64 `json:"build_seconds"`
	// HeapPerEntry is what the memory engine's heap grew by per index
	// entry when the index was built (one entry per entity); Entries how
	// many entries that was.
	HeapPerEntry float64 `json:"heap_bytes_per_entry"`
	Entries      int     `json:"entries"`
	// HTTP has the full-table filter over HTTP on a memory server started
	// with --index on Score, on the one without (hLtMem) and on Azurite,
	// interleaved; Server is the indexed server's figure.
	HTTP   []httpFigure  `json:"http,omitempty"`
	Server *serverFigure `json:"server,omitempty"`
}

var (
	indexFilterSystems = []string{sLtMemIx, sLtMem, sLtPebIx, sLtPeb, sSQLiteIx, sSQLiteNoIx}
	indexWriteSystems  = []string{sLtMem, sLtMemIx, sLtPeb, sLtPebIx}
)

// sqliteVariant is the SQLite store with its full-table filter read
// through the Score index (INDEXED BY) or without any (NOT INDEXED), so
// that both run on the same database in the same run.
type sqliteVariant struct {
	*sqliteStore
	label string
	full  *sql.Stmt
}

func (s *sqliteVariant) name() string             { return s.label }
func (s *sqliteVariant) fullFilter() (int, error) { return s.count(s.full) }
func (s *sqliteVariant) close() error             { return s.full.Close() } // the database is the SQLite store's

// indexWorkloads runs the index's workloads into e.res.Index. The stores
// it adds are closed, and SQLite's index dropped, before it returns.
func (e *embedded) indexWorkloads() (err error) {
	cfg, s := e.cfg, e.cfg.Data
	ir := &indexResults{BuildSeconds: map[string]float64{}, Entries: s.n()}
	main := len(e.stores)
	defer func() {
		for _, st := range e.stores[main:] {
			if cerr := st.close(); cerr != nil && err == nil {
				err = fmt.Errorf("closing %s: %w", st.name(), cerr)
			}
		}
		e.stores = e.stores[:main]
	}()
	order := shuffled(s.n(), 1) // the main stores' order
	for _, name := range []string{sLtMemIx, sLtPebIx} {
		dir := ""
		if name == sLtPebIx {
			dir = filepath.Join(e.dir, strings.ReplaceAll(name, " ", "-"))
		}
		start := time.Now()
		st, err := newLocaltable(name, dir, s, order)
		if err != nil {
			return fmt.Errorf("loading %s: %w", name, err)
		}
		e.stores = append(e.stores, st)
		e.logf("loaded %-18s %d entities in %.1fs", name, s.n(), time.Since(start).Seconds())
		h0, _ := memNow()
		start = time.Now()
		if err := st.tbl.CreateIndex(ctx, ixIndexName, "Score"); err != nil {
			return fmt.Errorf("%s: building the index: %w", name, err)
		}
		ir.BuildSeconds[name] = time.Since(start).Seconds()
		if dir == "" {
			h1, _ := memNow()
			ir.HeapPerEntry = (float64(h1) - float64(h0)) / float64(s.n())
		}
		e.logf("built the index of %s in %.1fs", name, ir.BuildSeconds[name])
	}

	sq := e.store(sSQLite).(*sqliteStore)
	start := time.Now()
	if _, err := sq.db.Exec(`CREATE INDEX ` + sqliteIndexName + ` ON entities (tbl, Score)`); err != nil {
		return fmt.Errorf("SQLite: creating the index: %w", err)
	}
	ir.BuildSeconds[sSQLiteIx] = time.Since(start).Seconds()
	defer func() {
		if _, derr := sq.db.Exec(`DROP INDEX ` + sqliteIndexName); derr != nil && err == nil {
			err = fmt.Errorf("SQLite: dropping the index: %w", derr)
		}
	}()
	for _, v := range []struct{ label, from string }{
		{sSQLiteIx, "entities INDEXED BY " + sqliteIndexName},
		{sSQLiteNoIx, "entities NOT INDEXED"},
	} {
		q, err := sq.db.Prepare(`SELECT ` + sqliteCols + ` FROM ` + v.from + ` WHERE tbl = 'bench' AND Score < 1.0 ORDER BY pk, rk`)
		if err != nil {
			return fmt.Errorf("%s: %w", v.label, err)
		}
		e.stores = append(e.stores, &sqliteVariant{sqliteStore: sq, label: v.label, full: q})
	}

	// What the figures append to e.res.Embedded is moved to ir.
	first := len(e.res.Embedded)
	from := first
	want := s.scoreMatches()
	if _, err := e.interleave(wFull, cfg.Rounds, indexFilterSystems, e.simple(cfg.MaxOps, func(st store, _, _ int) error {
		n, err := st.fullFilter()
		if err == nil && n != want {
			err = errCount(wFull, n, want)
		}
		return err
	})); err != nil {
		return err
	}
	ir.Filter = slices.Clone(e.res.Embedded[from:])

	// The writes, under keys of their own ("x…"), not those of the main
	// write workloads that follow on the same stores; as those, in chunks
	// removed (untimed) after each, so the stores keep their size.
	from = len(e.res.Embedded)
	insKeys := make([][]string, cfg.Rounds)
	for r := range insKeys {
		insKeys[r] = make([]string, cfg.MaxOps)
		for i := range insKeys[r] {
			insKeys[r][i] = "x" + pad(r, 2) + "-" + pad(i, 7)
		}
	}
	if _, err := e.interleave(wInsert, cfg.Rounds, indexWriteSystems, e.writes(cfg.MaxOps, 1, func(st store, round, i int) error {
		return st.insert(pk(i%s.Parts), insKeys[round][i])
	}, func(round, i int) (string, []string) {
		return pk(i % s.Parts), insKeys[round][i : i+1]
	})); err != nil {
		return err
	}
	nTx := max(1, cfg.MaxOps/100)
	txRows := make([][]string, cfg.Rounds)
	for r := range txRows {
		txRows[r] = make([]string, 100)
		for j := range txRows[r] {
			txRows[r][j] = "x" + pad(r, 2) + "-" + pad(j, 3)
		}
	}
	if _, err := e.interleave(wTx100, cfg.Rounds, indexWriteSystems, e.writes(nTx, 100, func(st store, round, i int) error {
		return st.tx100("x"+pad(i, 6), txRows[round]) // a partition of each transaction's own
	}, func(round, i int) (string, []string) {
		return "x" + pad(i, 6), txRows[round]
	})); err != nil {
		return err
	}
	ir.Write = slices.Clone(e.res.Embedded[from:])
	e.res.Embedded = e.res.Embedded[:first]
	e.res.Index = ir
	return nil
}

// indexWorkload runs the full-table filter over HTTP on a memory server
// started with --index bench:Score (loaded as the others are), with the
// memory server without it and Azurite, interleaved, into h.res.Index.
// The indexed server is stopped before it returns.
func (h *httpRun) indexWorkload(bin string) error {
	if h.res.Index == nil {
		h.res.Index = &indexResults{}
	}
	p, err := startLocaltable(hLtMemIx, bin, "", "--index", tableName+":Score")
	if err != nil {
		return err
	}
	defer p.stop()
	t := &httpTarget{proc: p, fig: serverFigure{Server: p.name, Version: h.res.Versions["localtable"], StartupMs: float64(p.startup.Microseconds()) / 1000}}
	if t.client, err = newClient(p, h.cfg.Workers); err != nil {
		return err
	}
	if err := h.load(t); err != nil {
		return err
	}
	all := h.targets
	defer func() { h.targets = all }()
	h.targets = []*httpTarget{t}
	for _, o := range all {
		if o.proc.name == hLtMem || o.proc.name == hAzurit {
			h.targets = append(h.targets, o)
		}
	}
	from := len(h.res.HTTP)
	fullWant := h.cfg.HTTPData.scoreMatches()
	if err := h.interleave(hwFull, func(c *aztables.Client, _, _ int) (int, error) {
		n, err := count(c, "Score lt 1.0")
		if err == nil && n != fullWant {
			err = errCount(hwFull, n, fullWant)
		}
		return 0, err
	}); err != nil {
		return err
	}
	h.res.Index.HTTP = slices.Clone(h.res.HTTP[from:])
	h.res.HTTP = h.res.HTTP[:from]
	t.fig.PeakRSS, _ = procStatus(p.pid(), "VmHWM")
	h.res.Index.Server = &t.fig
	return nil
}

// indexRatios adds the index's ratios to res.Ratios.
func indexRatios(res *results, add func(group, w, a, b, metric string, ra, rb []float64)) {
	x := res.Index
	if x == nil {
		return
	}
	rounds := func(figs []figure, w, system string) []float64 {
		if f := find(figs, w, system); f != nil {
			return f.NsPerOp
		}
		return nil
	}
	for _, g := range []struct{ group, ix, plain string }{{gIxMem, sLtMemIx, sLtMem}, {gIxPeb, sLtPebIx, sLtPeb}} {
		add(g.group, wFull, g.ix, g.plain, "ns/op", rounds(x.Filter, wFull, g.ix), rounds(x.Filter, wFull, g.plain))
		for _, w := range []string{wInsert, wTx100} {
			add(g.group, w, g.ix, g.plain, "ns/op", rounds(x.Write, w, g.ix), rounds(x.Write, w, g.plain))
		}
	}
	for _, lt := range []string{sLtMemIx, sLtPebIx} {
		add(gIxSQL, wFull+" ("+lt+")", lt, sSQLiteIx, "ns/op", rounds(x.Filter, wFull, lt), rounds(x.Filter, wFull, sSQLiteIx))
	}
	ix := findHTTP(x.HTTP, hwFull, hLtMemIx)
	for _, g := range []struct{ group, peer string }{{gIxHTTP, hAzurit}, {gIxHTTPL, hLtMem}} {
		if peer := findHTTP(x.HTTP, hwFull, g.peer); ix != nil && peer != nil {
			add(g.group, hwFull, hLtMemIx, g.peer, "server CPU ns/op", ix.CPUPerOpNs, peer.CPUPerOpNs)
		}
	}
}

// indexMarkdown is the report's section on the index.
func indexMarkdown(res *results) string {
	x := res.Index
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## Secondary index\n\n")
	if x.Command != "" {
		p("Measured apart from the rest of the report (localtable %s), with:\n\n```sh\n%s\n```\n\n", x.Version, x.Command)
	}
	p("The full-table filter at 1%% selectivity (`Score lt 1.0`, %s of %s entities, every match returned as an entity or a row) through an index on Score, against the same filter without one, in %d interleaved rounds on the six systems below. ", fmtInt(res.Config.Data.scoreMatches()), fmtInt(x.Entries), res.Config.Rounds)
	p("The indexed localtable stores are loaded as the main ones are, then the index is declared on the loaded table (built online); SQLite's is `CREATE INDEX … ON entities (tbl, Score)` on the main SQLite database, read with `INDEXED BY`, its scan with `NOT INDEXED`.\n\n")
	p("| system | 1%% filter | build on the loaded table |\n|---|---|---|\n")
	for _, sys := range indexFilterSystems {
		build := ""
		if s, ok := x.BuildSeconds[sys]; ok {
			build = fmt.Sprintf("%.1f s", s)
		}
		p("| %s | %s | %s |\n", sys, fmtNs(med(find(x.Filter, wFull, sys))), build)
	}
	p("\n| ratio (median of the per-round ratios) | value | issue 21's target |\n|---|---|---|\n")
	for _, g := range []struct{ group, engine string }{{gIxMem, "memory"}, {gIxPeb, "pebble"}} {
		if r := findRatio(res, g.group, wFull); r > 0 {
			p("| %s: scan ÷ index | %.1f× faster | ≥ %d× |\n", g.engine, 1/r, ixMinSpeedup)
		}
	}
	for _, lt := range []string{sLtMemIx, sLtPebIx} {
		if r := findRatio(res, gIxSQL, wFull+" ("+lt+")"); r > 0 {
			p("| %s ÷ %s | %s | < 1× |\n", lt, sSQLiteIx, fmtRatio(r))
		}
	}
	p("\nThe cost of the index on writes: the same writes into the indexed stores and the main ones (no index), interleaved, each loaded with the data set; pebble fsyncs each commit. ")
	p("The ratio is with the index ÷ without (the issue's target: at most %.1f×).\n\n", ixMaxCost)
	p("| | memory | pebble |\n|---|---|---|\n")
	for _, w := range []string{wInsert, wTx100} {
		p("| %s |", w)
		for _, g := range []struct{ group, ix, plain string }{{gIxMem, sLtMemIx, sLtMem}, {gIxPeb, sLtPebIx, sLtPeb}} {
			p(" %s (%s → %s) |", fmtRatio(findRatio(res, g.group, w)), fmtNs(med(find(x.Write, w, g.plain))), fmtNs(med(find(x.Write, w, g.ix))))
		}
		p("\n")
	}
	p("\nMemory per index entry (the memory engine's live heap after the build, less before, per entry): %s.\n\n", fmtBytes(x.HeapPerEntry))
	if len(x.HTTP) > 0 {
		p("**Over HTTP**: the same filter through the Go SDK (%d workers, every page) on a memory server started with `serve --index %s:Score`, on the memory server without it, and on Azurite, in %d interleaved rounds on the HTTP data set (%s entities, %s matches).\n\n",
			res.Config.Workers, tableName, res.Config.Rounds, fmtInt(res.Config.HTTPData.n()), fmtInt(res.Config.HTTPData.scoreMatches()))
		p("| server | server CPU/op | ops/s | p50 | p99 |\n|---|---|---|---|---|\n")
		for _, f := range x.HTTP {
			p("| %s | %s | %.0f | %s | %s |\n", f.Server, fmtNs(f.MedCPUPerOp), f.MedOpsSec, fmtNs(f.MedP50), fmtNs(f.MedP99))
		}
		p("\n")
		if r := findRatio(res, gIxHTTP, hwFull); r > 0 {
			p("Server CPU per op, indexed localtable ÷ Azurite: %s (issue 21's target: ≤ 0.02×). ", fmtRatio(r))
		}
		if r := findRatio(res, gIxHTTPL, hwFull); r > 0 {
			p("Indexed ÷ not indexed: %s.", fmtRatio(r))
		}
		p("\n\n")
	}
	return b.String()
}

// indexOnly runs the index's workloads alone, on the stores they need
// (localtable memory and pebble, SQLite, and over HTTP the memory server
// and Azurite), and writes the outputs with the other figures of out's
// results.json kept.
func indexOnly(cfg config, out, doc, cmd string, logf func(string, ...any)) error {
	return measureApart(cfg, out, doc, cmd, "localtable-bench-index-", func(res *results, work, version string) error {
		ir, err := runIndexApart(cfg, work, logf)
		if err != nil {
			return err
		}
		ir.Command, ir.Version = cmd, version
		res.Index = ir
		return nil
	})
}

// runIndexApart loads the stores the index's workloads need into work
// and runs them (for indexOnly).
func runIndexApart(cfg config, work string, logf func(string, ...any)) (*indexResults, error) {
	dir, err := benchDir()
	if err != nil {
		return nil, err
	}
	root := filepath.Dir(dir)
	s := cfg.Data
	part := &results{Versions: versions(root)}
	e := &embedded{cfg: cfg, dir: work, logf: logf, res: part}
	defer e.close()
	order := shuffled(s.n(), 1)
	sub := func(name string) (string, error) {
		d := filepath.Join(work, strings.ReplaceAll(name, " ", "-"))
		return d, os.MkdirAll(d, 0o755)
	}
	for _, name := range []string{sLtMem, sLtPeb, sSQLite} {
		start := time.Now()
		var st store
		switch name {
		case sLtMem:
			st, err = newLocaltable(name, "", s, order)
		case sLtPeb:
			var d string
			if d, err = sub(name); err == nil {
				st, err = newLocaltable(name, d, s, order)
			}
		default:
			var d string
			if d, err = sub(name); err == nil {
				st, err = newSQLite(d, s, order)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", name, err)
		}
		e.stores = append(e.stores, st)
		logf("loaded %-18s %d entities in %.1fs", name, s.n(), time.Since(start).Seconds())
	}
	if err := e.indexWorkloads(); err != nil {
		return nil, err
	}

	h := &httpRun{cfg: cfg, logf: logf, res: part}
	bin, err := buildLocaltable(root, work)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, t := range h.targets {
			t.proc.stop()
		}
	}()
	add := func(p *serverProc, err error) error {
		if err != nil {
			return err
		}
		t := &httpTarget{proc: p, fig: serverFigure{Server: p.name, Version: p.version}}
		h.targets = append(h.targets, t)
		if t.client, err = newClient(p, cfg.Workers); err != nil {
			return err
		}
		return h.load(t)
	}
	if err := add(startLocaltable(hLtMem, bin, "")); err != nil {
		return nil, err
	}
	if cfg.Azurite {
		az, skip := setupAzurite(dir, cfg.InstallTimeout, logf)
		if skip != "" {
			logf("%s", skip)
		} else {
			azDir := filepath.Join(work, "azurite")
			if err := os.MkdirAll(azDir, 0o755); err != nil {
				return nil, err
			}
			if err := add(startAzurite(az, azDir)); err != nil {
				return nil, err
			}
		}
	}
	if err := h.indexWorkload(bin); err != nil {
		return nil, err
	}
	return part.Index, nil
}
