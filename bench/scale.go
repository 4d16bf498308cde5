package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/localtable/localtable/storage/pebble"
)

// How cost grows with the size of the data set: each system is loaded
// and measured in a process of its own (the program run again with
// -child), one size after another, so that its peak RSS is its own and
// not that of a process holding every store. The child runs the embedded
// workloads on its one store (rounds of one system are not interleaved
// with other systems': compare how a system's figures grow, not small
// differences between systems), then compacts the store and reports its
// bytes on disk.

// scaleSystems are the systems measured at every size.
var scaleSystems = []string{sLtMem, sLtPeb, sSQLite, sBolt}

// scaleHotSystems are measured at every size with -scale-hot: the memory
// engine read in place (Rows, GetRow) and the bare B-tree's read into a
// reused buffer, for how the in-place full scan grows against the raw
// B-tree's (issue 24's target 2). They run the reads only.
var scaleHotSystems = []string{sLtMemRow, sRawTreeNA}

// scaleHotBase returns the store a hot-path system views, or "".
func scaleHotBase(system string) string {
	for _, h := range hotSystems {
		if h[0] == system && slices.Contains(scaleHotSystems, system) {
			return h[1]
		}
	}
	return ""
}

// scaleShown returns the systems a report shows: scaleSystems, then the
// hot-path systems the run measured.
func scaleShown(sr *scaleResults) []string {
	out := slices.Clone(scaleSystems)
	for _, sys := range scaleHotSystems {
		if slices.ContainsFunc(sr.Points, func(pt scalePoint) bool { return pt.System == sys }) {
			out = append(out, sys)
		}
	}
	return out
}

// scaleWorkloads are the workloads the scaling section shows.
var scaleWorkloads = []string{wGet, wInsert, wTx100, wRange, wPart, wFull, wReopen}

// scaleResults are the figures of a -scale run.
type scaleResults struct {
	Command   string       `json:"command"`
	Version   string       `json:"version"`
	Started   time.Time    `json:"started"`
	Rounds    int          `json:"rounds"`
	Phase     float64      `json:"phase_seconds"`
	Sizes     []int        `json:"sizes"`
	Points    []scalePoint `json:"points"`
	LoadStart string       `json:"loadavg_start"`
	LoadEnd   string       `json:"loadavg_end"`
	// Missing says which system and size did not finish, and why.
	Missing []string `json:"missing,omitempty"`
}

// scalePoint is one system at one size, measured in a process of its
// own.
type scalePoint struct {
	System      string  `json:"system"`
	Entities    int     `json:"entities"`
	LoadSeconds float64 `json:"load_seconds"`
	// PeakRSS is the child process's VmHWM once its workloads are done
	// (before the compaction); PeakRSSLoaded its VmHWM once the store is
	// loaded, before the workloads and the inputs they make in advance
	// (the keys of every write phase: tens of MiB in a full run).
	PeakRSS       int64 `json:"peak_rss_bytes"`
	PeakRSSLoaded int64 `json:"peak_rss_loaded_bytes"`
	// DiskBytes is the size of the store's files after a compaction
	// (pebble: Compact; SQLite: a TRUNCATE checkpoint and VACUUM; bbolt:
	// bolt.Compact into a new file); 0 for the memory engine.
	DiskBytes int64 `json:"disk_bytes,omitempty"`
	// TableBytes is, for pebble, the part of DiskBytes in table files
	// (the rest: its write-ahead log, recycled and preallocated, and its
	// manifest, a few MiB whatever the size).
	TableBytes int64 `json:"table_bytes,omitempty"`
	// HeapPerEntity is the memory engine's live heap per entity.
	HeapPerEntity float64  `json:"heap_bytes_per_entity,omitempty"`
	Figures       []figure `json:"figures"`
	LoadAvg       string   `json:"loadavg"`
}

// shapeOf returns the data set of n entities: partitions of 2,000 rows,
// as the standard one (n must be a multiple of 2,000 up to 10,000,000;
// or below 2,000, one partition). Above 2,000,000 (1,000 partitions) the
// PartitionKeys no longer sort as their numbers ("p1000" sorts before
// "p101"), which no workload relies on: each names its keys, and the data
// set is loaded in a shuffled order.
func shapeOf(n int) (shape, error) {
	switch {
	case n <= 0 || n > 10_000_000:
		return shape{}, fmt.Errorf("-entities %d: want 1 to 10,000,000", n)
	case n < 2000:
		return shape{Parts: 1, Rows: n}, nil
	case n%2000 != 0:
		return shape{}, fmt.Errorf("-entities %d: want a multiple of 2,000 (partitions of 2,000 rows)", n)
	}
	return shape{Parts: n / 2000, Rows: 2000}, nil
}

// parseSizes reads a comma-separated list of entity counts.
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(f), "_", ""))
		if err != nil {
			return nil, fmt.Errorf("-scale %q: %v", s, err)
		}
		if _, err := shapeOf(n); err != nil {
			return nil, err
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// scaleConfig is cfg for one child: three rounds, no or filters.
func scaleConfig(cfg config, n int) (config, error) {
	s, err := shapeOf(n)
	if err != nil {
		return cfg, err
	}
	cfg.Data = s
	cfg.Rounds = min(cfg.Rounds, 3)
	cfg.OrTerms = nil
	return cfg, nil
}

// runChild loads one system with cfg's data set in this process, runs
// the embedded workloads on it, compacts it, and writes its scalePoint
// as JSON to stdout.
func runChild(cfg config, system string, logf func(string, ...any)) error {
	work, err := os.MkdirTemp("", "localtable-bench-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	e := &embedded{cfg: cfg, dir: work, logf: logf, res: &results{}, oneSystem: true}
	defer e.close()
	t0 := time.Now()
	load := system
	if base := scaleHotBase(system); base != "" {
		load = base
	}
	if err := e.load(load); err != nil {
		return err
	}
	pt := scalePoint{System: system, Entities: cfg.Data.n(), LoadSeconds: time.Since(t0).Seconds()}
	if len(e.stores) != 1 {
		return fmt.Errorf("-child %q: not one of %q", system, append(slices.Clone(scaleSystems), scaleHotSystems...))
	}
	if load != system {
		// The hot-path view reads the store it views, which e.close
		// closes; the view alone is measured.
		base := e.stores[0]
		e.stores = []store{hotView(system, base)}
		defer base.close()
		e.res.Memory = nil
	}
	if pt.PeakRSSLoaded, err = procStatus(0, "VmHWM"); err != nil {
		return err
	}
	if err := e.run(); err != nil {
		return err
	}
	pt.Figures = e.res.Embedded
	for _, m := range e.res.Memory {
		pt.HeapPerEntity = m.HeapPerEntity
	}
	if pt.PeakRSS, err = procStatus(0, "VmHWM"); err != nil {
		return err
	}
	if c, ok := e.stores[0].(compacter); ok && system != sLtMem && load == system {
		if pt.DiskBytes, err = c.compactedSize(); err != nil {
			return fmt.Errorf("compacting %s: %w", system, err)
		}
		if lt, ok := e.stores[0].(*ltStore); ok {
			if pt.TableBytes, err = dirSize(lt.dir, ".sst"); err != nil {
				return err
			}
		}
	}
	pt.LoadAvg = loadAvg()
	return json.NewEncoder(os.Stdout).Encode(pt)
}

// compacter is a store on disk that can say its size once compacted.
type compacter interface {
	compactedSize() (int64, error)
}

func (s *ltStore) compactedSize() (int64, error) {
	db, ok := s.eng.(*pebble.DB)
	if !ok {
		return 0, errors.New("not on pebble")
	}
	if err := db.Compact(context.Background()); err != nil {
		return 0, err
	}
	// Closed, the database has deleted the tables the compaction made
	// obsolete.
	if err := s.acct.Close(); err != nil {
		return 0, err
	}
	return dirSize(s.dir, "")
}

func (s *sqliteStore) compactedSize() (int64, error) {
	for _, q := range []string{"PRAGMA wal_checkpoint(TRUNCATE)", "VACUUM", "PRAGMA wal_checkpoint(TRUNCATE)"} {
		if _, err := s.db.Exec(q); err != nil {
			return 0, fmt.Errorf("%s: %w", q, err)
		}
	}
	return dirSize(filepath.Dir(s.path), "")
}

func (s *boltStore) compactedSize() (int64, error) {
	path := s.path + ".compacted"
	dst, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return 0, err
	}
	defer os.Remove(path)
	if err := bolt.Compact(dst, s.db, 64<<20); err != nil {
		dst.Close()
		return 0, err
	}
	if err := dst.Close(); err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// dirSize is the total size of the regular files under dir whose names
// end in suffix.
func dirSize(dir, suffix string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(path, suffix) {
			return err
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted since it was listed
		}
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}

// runScale measures every system at every size, each in a child process
// (this program with -child), at most timeout each (0: no limit).
func runScale(cfg config, sizes []int, systems []string, timeout time.Duration, logf func(string, ...any)) (*scaleResults, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	sr := &scaleResults{Started: time.Now().UTC(), Sizes: sizes, LoadStart: loadAvg()}
	for _, n := range sizes {
		c, err := scaleConfig(cfg, n)
		if err != nil {
			return nil, err
		}
		sr.Rounds, sr.Phase = c.Rounds, c.Phase.Seconds()
		for _, sys := range systems {
			cj, err := json.Marshal(c)
			if err != nil {
				return nil, err
			}
			args := []string{"-child", sys, "-child-config", string(cj)}
			logf("scale: %s, %s entities, in a process of its own", sys, fmtInt(n))
			pt, err := runChildProcess(exe, args, timeout, logf)
			if err != nil {
				msg := fmt.Sprintf("%s at %s entities: %v", sys, fmtInt(n), err)
				logf("scale: %s", msg)
				sr.Missing = append(sr.Missing, msg)
				continue
			}
			logf("scale: %s, %s entities: loaded in %.1fs, peak RSS %s, %s on disk", sys, fmtInt(n), pt.LoadSeconds, fmtBytes(float64(pt.PeakRSS)), fmtBytes(float64(pt.DiskBytes)))
			sr.Points = append(sr.Points, *pt)
		}
	}
	sr.LoadEnd = loadAvg()
	return sr, nil
}

// runChildProcess runs the program with args and decodes the scalePoint
// it writes; its log lines go to logf.
func runChildProcess(exe string, args []string, timeout time.Duration, logf func(string, ...any)) (*scalePoint, error) {
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		logf("  | %s", sc.Text())
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("did not finish in %v", timeout)
	}
	if err != nil {
		return nil, err
	}
	var pt scalePoint
	if err := json.Unmarshal(out.Bytes(), &pt); err != nil {
		return nil, fmt.Errorf("child output: %v", err)
	}
	return &pt, nil
}

// scaleOnly runs the scaling measurements alone and writes the outputs
// again with the other figures of out's results.json kept.
func scaleOnly(cfg config, sizes []int, systems []string, timeout time.Duration, out, doc, cmd string, logf func(string, ...any)) error {
	return measureApart(cfg, out, doc, cmd, "localtable-bench-scale-", func(res *results, _, version string) error {
		sr, err := runScale(cfg, sizes, systems, timeout, logf)
		if err != nil {
			return err
		}
		sr.Command, sr.Version = cmd, version
		res.Scaling = mergeScale(res.Scaling, sr)
		return nil
	})
}

// mergeScale adds the figures of a new -scale run to those of an earlier
// one: a system and size measured again replaces the earlier figures.
func mergeScale(old, sr *scaleResults) *scaleResults {
	if old == nil {
		return sr
	}
	for _, pt := range old.Points {
		if sr.point(pt.System, pt.Entities) == nil {
			sr.Points = append(sr.Points, pt)
		}
	}
	for _, n := range old.Sizes {
		if !slices.Contains(sr.Sizes, n) {
			sr.Sizes = append(sr.Sizes, n)
		}
	}
	for _, m := range old.Missing {
		if !slices.ContainsFunc(sr.Points, func(pt scalePoint) bool {
			return strings.HasPrefix(m, pt.System+" at "+fmtInt(pt.Entities)+" entities")
		}) {
			sr.Missing = append(sr.Missing, m)
		}
	}
	slices.Sort(sr.Sizes)
	if old.Command != sr.Command {
		sr.Command = old.Command + "\n" + sr.Command
	}
	sr.LoadStart = old.LoadStart + " (first run), " + sr.LoadStart
	return sr
}

// point returns the scalePoint of a system at a size, or nil.
func (sr *scaleResults) point(system string, n int) *scalePoint {
	for i := range sr.Points {
		if sr.Points[i].System == system && sr.Points[i].Entities == n {
			return &sr.Points[i]
		}
	}
	return nil
}

// scaleNs is the median time per operation of a workload at a point.
func scaleNs(pt *scalePoint, w string) float64 {
	if pt == nil {
		return 0
	}
	return med(find(pt.Figures, w, pt.System))
}

// scaleMarkdown renders the section "How cost grows with size".
func scaleMarkdown(res *results, svg string) string {
	sr := res.Scaling
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## How cost grows with size\n\n")
	p("Measured apart from the rest of the report, on %s (localtable %s), with:\n\n```sh\n%s\n```\n\n", sr.Started.Format("2006-01-02"), sr.Version, sr.Command)
	p("Each system at each size ran in a process of its own (the program run again with `-child`): loaded, then the embedded workloads, %d rounds of %v each, on that one store; the write workloads remove what they insert in chunks of at most a tenth of the data set, so every phase sees the stated size within 10%%. ", sr.Rounds, time.Duration(sr.Phase*float64(time.Second)))
	p("The rounds of one system are not interleaved with another's, so compare how each system's cost grows, not small differences between systems (the interleaved table above is for those). ")
	p("Peak RSS is the child's own VmHWM: once its store is loaded, and after its workloads (which add the inputs the program makes before each timed loop: the keys of every write phase, tens of MiB in a full run, the same for every system); bytes on disk are the store's files after a compaction (pebble `Compact`, then closed: all its files, and its table files alone, without the write-ahead log it keeps and recycles, a few MiB whatever the size; SQLite a TRUNCATE checkpoint and `VACUUM`; bbolt `bolt.Compact` into a new file, whose size is what bbolt allocated, grown in steps). ")
	p("The load average (1, 5, 15 min) was %s when it began and %s when it ended.\n\n", sr.LoadStart, sr.LoadEnd)
	p("![time per operation against entities, log-log](%s)\n\n", svg)
	sizes := sr.Sizes
	head := func(first string) {
		p("| %s |", first)
		for _, n := range sizes {
			p(" %s |", fmtInt(n))
		}
		if len(sizes) >= 2 {
			p(" last ÷ previous |")
		}
		p("\n|---|%s", strings.Repeat("---|", len(sizes)))
		if len(sizes) >= 2 {
			p("---|")
		}
		p("\n")
	}
	growth := func(a, b float64) {
		if len(sizes) >= 2 {
			if a > 0 && b > 0 {
				p(" %s |", fmtRatio(b/a))
			} else {
				p(" — |")
			}
		}
	}
	p("Time per operation (median of the rounds):\n\n")
	head("workload, system")
	for _, w := range scaleWorkloads {
		for _, sys := range scaleShown(sr) {
			if w == wReopen && sys == sLtMem {
				continue
			}
			if scaleHotBase(sys) != "" && !slices.Contains([]string{wGet, wRange, wFull}, w) {
				continue // the hot-path systems read only
			}
			p("| %s, %s |", w, sys)
			var v []float64
			for _, n := range sizes {
				x := scaleNs(sr.point(sys, n), w)
				v = append(v, x)
				p(" %s |", fmtNs(x))
			}
			if len(v) >= 2 {
				growth(v[len(v)-2], v[len(v)-1])
			}
			p("\n")
		}
	}
	if len(sizes) >= 2 && sr.point(sLtMemRow, sizes[len(sizes)-1]) != nil {
		// Issue 24's target 2: the in-place full scan per entity grows no
		// faster than the raw B-tree's.
		a, b := sizes[len(sizes)-2], sizes[len(sizes)-1]
		lt := scaleNs(sr.point(sLtMemRow, b), wFull) / scaleNs(sr.point(sLtMemRow, a), wFull)
		raw := scaleNs(sr.point(sRawTreeNA, b), wFull) / scaleNs(sr.point(sRawTreeNA, a), wFull)
		verdict := "met"
		if !(lt <= raw) {
			verdict = "not met"
		}
		p("\nThe memory engine's full-table scan read in place, per entity, from %s to %s entities: ×%.2f; the raw B-tree's read into a reused buffer: ×%.2f (per entity: the totals ÷ %.0f). Target 2 (the in-place scan grows no faster than the raw B-tree's): **%s**.\n",
			fmtInt(a), fmtInt(b), lt*float64(a)/float64(b), raw*float64(a)/float64(b), float64(b)/float64(a), verdict)
	}
	p("\nPeak RSS of each system's process, its load time, and its bytes per entity (on disk after compaction; the memory engine's live heap):\n\n")
	head("system: figure")
	for _, sys := range scaleSystems { // the hot-path systems hold the same stores
		for _, f := range []struct {
			name string
			get  func(*scalePoint) float64
			fmt  func(float64) string
		}{
			{"peak RSS, loaded", func(pt *scalePoint) float64 { return float64(pt.PeakRSSLoaded) }, fmtBytes},
			{"peak RSS", func(pt *scalePoint) float64 { return float64(pt.PeakRSS) }, fmtBytes},
			{"load", func(pt *scalePoint) float64 { return pt.LoadSeconds }, func(s float64) string { return fmt.Sprintf("%.1f s", s) }},
			{"bytes per entity", func(pt *scalePoint) float64 {
				if pt.DiskBytes > 0 {
					return float64(pt.DiskBytes) / float64(pt.Entities)
				}
				return pt.HeapPerEntity
			}, func(v float64) string { return fmt.Sprintf("%.0f B", v) }},
			{"table files per entity", func(pt *scalePoint) float64 { return float64(pt.TableBytes) / float64(pt.Entities) }, func(v float64) string { return fmt.Sprintf("%.0f B", v) }},
		} {
			if f.name == "table files per entity" && sys != sLtPeb {
				continue
			}
			p("| %s: %s |", sys, f.name)
			var v []float64
			for _, n := range sizes {
				pt := sr.point(sys, n)
				if pt == nil {
					v = append(v, 0)
					p(" — |")
					continue
				}
				x := f.get(pt)
				v = append(v, x)
				p(" %s |", f.fmt(x))
			}
			if len(v) >= 2 {
				growth(v[len(v)-2], v[len(v)-1])
			}
			p("\n")
		}
	}
	p("\n")
	if len(sr.Missing) > 0 {
		p("Not measured:\n\n")
		for _, m := range sr.Missing {
			p("- %s\n", m)
		}
		p("\n")
	}
	return b.String()
}

// scaleColors are the lines' colours, by system.
var scaleColors = map[string]string{sLtMem: "#1971c2", sLtPeb: "#2b8a3e", sSQLite: "#e8590c", sBolt: "#862e9c"}

// scaleSVG draws time per operation against entities, log-log, one
// panel per workload and one line per system, and a last panel of bytes
// per entity.
func scaleSVG(sr *scaleResults) string {
	const (
		panelW, panelH = 300, 210
		cols           = 4
		padL, padT     = 62, 30
		plotW, plotH   = panelW - padL - 14, panelH - padT - 38
		top            = 64
	)
	type series struct {
		sys string
		xy  [][2]float64
	}
	type panel struct {
		title string
		unit  func(float64) string
		lines []series
	}
	var panels []panel
	for _, w := range scaleWorkloads {
		pn := panel{title: w + " (time/op)", unit: fmtNs}
		for _, sys := range scaleSystems {
			s := series{sys: sys}
			for _, n := range sr.Sizes {
				if v := scaleNs(sr.point(sys, n), w); v > 0 {
					s.xy = append(s.xy, [2]float64{float64(n), v})
				}
			}
			pn.lines = append(pn.lines, s)
		}
		panels = append(panels, pn)
	}
	bytesPanel := panel{title: "bytes per entity (disk; memory: heap)", unit: func(v float64) string { return fmtBytes(v) }}
	for _, sys := range scaleSystems {
		s := series{sys: sys}
		for _, n := range sr.Sizes {
			if pt := sr.point(sys, n); pt != nil {
				v := pt.HeapPerEntity
				if pt.DiskBytes > 0 {
					v = float64(pt.DiskBytes) / float64(n)
				}
				if v > 0 {
					s.xy = append(s.xy, [2]float64{float64(n), v})
				}
			}
		}
		bytesPanel.lines = append(bytesPanel.lines, s)
	}
	panels = append(panels, bytesPanel)
	rows := (len(panels) + cols - 1) / cols
	width, height := cols*panelW+16, top+rows*panelH+10
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="8" y="20" font-size="15" font-weight="bold">How cost grows with entities (log-log; each system in a process of its own)</text>` + "\n")
	lx := 8.0
	for _, sys := range scaleSystems {
		p(`<rect x="%.0f" y="32" width="14" height="4" fill="%s"/><text x="%.0f" y="38">%s</text>`+"\n", lx, scaleColors[sys], lx+18, html.EscapeString(sys))
		lx += 20 + 7*float64(len(sys)) + 20
	}
	xlo, xhi := math.Inf(1), math.Inf(-1)
	for _, n := range sr.Sizes {
		xlo, xhi = math.Min(xlo, math.Log10(float64(n))), math.Max(xhi, math.Log10(float64(n)))
	}
	if xhi-xlo < 1 {
		xlo, xhi = xlo-0.5, xhi+0.5
	}
	for i, pn := range panels {
		ox, oy := 8+(i%cols)*panelW, top+(i/cols)*panelH
		ylo, yhi := math.Inf(1), math.Inf(-1)
		for _, s := range pn.lines {
			for _, xy := range s.xy {
				ylo, yhi = math.Min(ylo, math.Log10(xy[1])), math.Max(yhi, math.Log10(xy[1]))
			}
		}
		p(`<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", ox+4, oy+14, html.EscapeString(pn.title))
		if math.IsInf(ylo, 0) {
			continue
		}
		ylo, yhi = math.Floor(ylo), math.Ceil(yhi)
		if yhi-ylo < 1 {
			yhi = ylo + 1
		}
		X := func(n float64) float64 {
			return float64(ox+padL) + (math.Log10(n)-xlo)/(xhi-xlo)*float64(plotW)
		}
		Y := func(v float64) float64 {
			return float64(oy+padT+plotH) - (math.Log10(v)-ylo)/(yhi-ylo)*float64(plotH)
		}
		for d := ylo; d <= yhi; d++ {
			y := Y(math.Pow(10, d))
			p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", ox+padL, y, ox+padL+plotW, y)
			p(`<text x="%d" y="%.1f" text-anchor="end" fill="#333">%s</text>`+"\n", ox+padL-4, y+4, pn.unit(math.Pow(10, d)))
		}
		for _, n := range sr.Sizes {
			x := X(float64(n))
			p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, oy+padT, x, oy+padT+plotH)
			p(`<text x="%.1f" y="%d" text-anchor="middle" fill="#333">%s</text>`+"\n", x, oy+padT+plotH+14, shortCount(n))
		}
		p(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", ox+padL, oy+padT, plotW, plotH)
		for _, s := range pn.lines {
			if len(s.xy) == 0 {
				continue
			}
			var pts []string
			for _, xy := range s.xy {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", X(xy[0]), Y(xy[1])))
				p(`<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>`+"\n", X(xy[0]), Y(xy[1]), scaleColors[s.sys])
			}
			p(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), scaleColors[s.sys])
		}
	}
	p("</svg>\n")
	return b.String()
}

// shortCount writes 20000 as 20k and 2000000 as 2M.
func shortCount(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}
