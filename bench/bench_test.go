package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable/internal/tabletest"
)

// TestQuick runs every workload at a tiny size and checks that each
// produced figures and that the outputs are well formed. It asserts no
// timing. The Azurite column runs when node and npm are present (npm
// installs Azurite on first use) and is reported as skipped otherwise;
// the test then skips, loudly, or fails under CI=true.
func TestQuick(t *testing.T) {
	cfg := tinyConfig()
	res, err := run(cfg, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	res.Command = command(true, "results", "", true)

	// Every embedded workload on its systems, every round.
	want := map[string][]string{
		wReopen: {sLtPeb, sRawPeb, sSQLite, sBolt},
		wUpdate: {sLtMem, sLtPeb, sSQLite, sBolt},
	}
	all := []string{sLtMem, sRawTree, sLtPeb, sRawPeb, sSQLite, sBolt}
	for _, w := range []string{wGet, wRange, wPart, wFull, wInsert, wTx100} {
		want[w] = all
	}
	// The hot-path reads: the get, the range and the full scan.
	for _, w := range []string{wGet, wRange, wFull} {
		want[w] = append(slices.Clone(all), hotNames()...)
	}
	for w, systems := range want {
		for _, s := range systems {
			checkFigure(t, res.Embedded, w, s, cfg.Rounds)
		}
	}
	if len(res.Embedded) != 6*6+4+4+3*4 {
		t.Errorf("%d embedded figures, want %d", len(res.Embedded), 6*6+4+4+3*4)
	}
	for _, g := range []string{gMemHot, gPebHot} {
		for _, w := range []string{wGet, wRange, wFull} {
			if findRatio(res, g, w) <= 0 {
				t.Errorf("no ratio %s, %s", g, w)
			}
		}
	}
	for _, s := range []string{sLtMem, sLtPeb} {
		for _, f := range res.Embedded {
			if f.Workload == wUpdate && f.System == s && sum(f.Ops) == 0 {
				t.Errorf("contended update on %s: no update", s)
			}
		}
	}

	// Memory per entity of the memory stores.
	if len(res.Memory) != 2 {
		t.Errorf("memory figures: %+v", res.Memory)
	}
	for _, m := range res.Memory {
		if m.HeapPerEntity <= 0 || m.Entities != cfg.Data.n() {
			t.Errorf("memory of %s: %+v", m.System, m)
		}
	}

	// The index: the filter on its six systems, the writes on four, the
	// builds, the heap per entry.
	checkIndex(t, res.Index, cfg)
	checkIndexBuild(t, res.IndexBuild, cfg)

	// The or filters: parse, plan, and three queries per size.
	if len(res.OrPlan) != 5*len(cfg.OrTerms) {
		t.Errorf("%d or-plan figures, want %d", len(res.OrPlan), 5*len(cfg.OrTerms))
	}
	for _, f := range res.OrPlan {
		if f.Median <= 0 || len(f.NsPerOp) != cfg.Rounds {
			t.Errorf("or plan %s %s: %+v", f.Workload, f.System, f)
		}
	}

	// HTTP: every workload on every server, Azurite when node is here.
	// Without node, Azurite must be reported as skipped; with node it is
	// measured, unless its install failed (npm offline, say), which must
	// be reported too.
	// Under CI=true, which installs node and npm, an Azurite column left
	// out fails the test (tabletest.Missing, once the rest is checked).
	servers := []string{hLtMem, hLtPeb}
	skipped := strings.Join(res.Skipped, "\n")
	_, nodeErr := exec.LookPath("node")
	_, npmErr := exec.LookPath("npm")
	var azuriteMissing string
	switch {
	case nodeErr != nil || npmErr != nil:
		if !strings.Contains(skipped, "Azurite column is skipped") {
			t.Errorf("without node or npm, skipped = %q", res.Skipped)
		}
		azuriteMissing = "node or npm not found on PATH: the Azurite column is NOT measured (install the Debian packages nodejs and npm)"
	case strings.Contains(skipped, "Azurite skipped: npm ci failed"):
		azuriteMissing = "the Azurite column is NOT measured: " + skipped
	default:
		servers = append(servers, hAzurit)
	}
	for _, w := range httpWorkloads {
		for _, s := range servers {
			f := findHTTP(res.HTTP, w, s)
			if f == nil {
				t.Errorf("HTTP %s on %s: no figure", w, s)
				continue
			}
			if len(f.Ops) != cfg.Rounds || sum(f.Ops) == 0 || f.MedOpsSec <= 0 || f.MedP50 <= 0 || f.MedP99 < f.MedP50 {
				t.Errorf("HTTP %s on %s: %+v", w, s, f)
			}
			for _, c := range f.CPUPerOpNs {
				if c < 0 {
					t.Errorf("HTTP %s on %s: negative CPU %v", w, s, c)
				}
			}
		}
	}
	// The filter over HTTP on the server started with --index, next to
	// the one without and Azurite.
	checkIndexHTTP(t, res.Index, slices.Contains(servers, hAzurit))
	if len(res.Servers) != len(servers) {
		t.Errorf("servers: %+v", res.Servers)
	}
	for _, s := range res.Servers {
		if s.PeakRSS <= 0 || s.LoadSeconds <= 0 {
			t.Errorf("server %s: %+v", s.Server, s)
		}
	}

	// Ratios: one per workload and comparison.
	groups := map[string]int{}
	for _, r := range res.Ratios {
		if r.Value <= 0 {
			t.Errorf("ratio %+v", r)
		}
		groups[r.Group]++
	}
	wantGroups := map[string]int{gMemRaw: 6 + 1, gPebRaw: 7, gPebSQL: 8, gPebBolt: 8, gIxMem: 3, gIxPeb: 3, gIxSQL: 2, gMemHot: 3, gPebHot: 3}
	for g, n := range wantGroups {
		if groups[g] != n {
			t.Errorf("%d ratios in group %q, want %d", groups[g], g, n)
		}
	}
	// In phases this short a server's CPU may stay below one tick in
	// every round, which leaves a workload without a CPU ratio
	// (TestPairedRatio checks that logic); there is never more than one
	// per workload.
	for _, g := range []string{gHTTPMem, gHTTPPeb} {
		if len(servers) == 2 && groups[g] != 0 || groups[g] > len(httpWorkloads) {
			t.Errorf("%d ratios in group %q with servers %q", groups[g], g, servers)
		}
	}

	checkFeed(t, res.Feed, cfg)
	for _, g := range []string{gFeedMem, gFeedPeb} {
		if groups[g] != len(feedWriteWorkloads) {
			t.Errorf("%d ratios in group %q, want %d", groups[g], g, len(feedWriteWorkloads))
		}
	}

	// The outputs.
	dir := t.TempDir()
	doc := filepath.Join(dir, "doc", "BENCHMARKS.md")
	if err := os.MkdirAll(filepath.Dir(doc), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := writeOutputs(res, out, doc); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back results
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	if len(back.Embedded) != len(res.Embedded) || len(back.HTTP) != len(res.HTTP) || len(back.Ratios) != len(res.Ratios) || back.Machine.NProc == 0 || back.Versions["Go"] == "" {
		t.Errorf("results.json does not round-trip the figures")
	}
	checkSVG(t, filepath.Join(out, "ratios.svg"), len(res.Ratios))
	md, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"](ratios.svg)", "## Embedded", "## Over HTTP", "| " + wTx100 + " |", res.Command, "## The change feed", "| pebble, 100 watchers |",
		"## Hot-path reads", "| memory | " + wGet + " |", "| pebble | " + wFull + " |", "≥ 0.7×"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("results.md lacks %q", s)
		}
	}
	d, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(d), "](../out/ratios.svg)") {
		t.Errorf("the doc does not link the chart relative to itself:\n%s", d)
	}

	// -feed-only: the feed measured again, the other figures kept.
	cmd := command(true, out, doc, true) + " -feed-only"
	if err := feedOnly(cfg, out, doc, cmd, t.Logf); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var again results
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatalf("results.json after -feed-only: %v", err)
	}
	if again.Feed == nil || again.Feed.Command != cmd || len(again.Embedded) != len(res.Embedded) || again.Command != res.Command {
		t.Errorf("-feed-only did not measure the feed again and keep the rest: feed %+v, %d embedded figures, command %q", again.Feed, len(again.Embedded), again.Command)
	} else {
		checkFeed(t, again.Feed, cfg)
	}
	if d, err := os.ReadFile(doc); err != nil || !strings.Contains(string(d), "Measured apart from the rest of the report") || !strings.Contains(string(d), cmd) {
		t.Errorf("the doc after -feed-only does not say how the feed was measured (%v):\n%s", err, d)
	}

	// -index-only: the index measured again, the other figures kept.
	cmd = command(true, out, doc, true) + " -index-only"
	if err := indexOnly(cfg, out, doc, cmd, t.Logf); err != nil {
		t.Fatal(err)
	}
	if b, err = os.ReadFile(filepath.Join(out, "results.json")); err != nil {
		t.Fatal(err)
	}
	again = results{}
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatalf("results.json after -index-only: %v", err)
	}
	if again.Index == nil || again.Index.Command != cmd || len(again.Embedded) != len(res.Embedded) || again.Feed == nil {
		t.Errorf("-index-only did not measure the index again and keep the rest: index %+v, %d embedded figures, feed %v", again.Index, len(again.Embedded), again.Feed != nil)
	} else {
		checkIndex(t, again.Index, cfg)
		checkIndexHTTP(t, again.Index, slices.Contains(servers, hAzurit))
	}
	if d, err := os.ReadFile(doc); err != nil || !strings.Contains(string(d), "## Secondary index") || !strings.Contains(string(d), cmd) {
		t.Errorf("the doc after -index-only does not say how the index was measured (%v):\n%s", err, d)
	}

	// -index-build-only: the index build measured again, the rest kept.
	cmd = command(true, out, doc, true) + " -index-build-only"
	if err := indexBuildOnly(cfg, out, doc, cmd, t.Logf); err != nil {
		t.Fatal(err)
	}
	if b, err = os.ReadFile(filepath.Join(out, "results.json")); err != nil {
		t.Fatal(err)
	}
	again = results{}
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatalf("results.json after -index-build-only: %v", err)
	}
	if again.IndexBuild == nil || again.IndexBuild.Command != cmd || again.Index == nil || again.Feed == nil || len(again.Embedded) != len(res.Embedded) {
		t.Errorf("-index-build-only did not measure the build again and keep the rest: %+v, index %v, feed %v, %d embedded figures", again.IndexBuild, again.Index != nil, again.Feed != nil, len(again.Embedded))
	} else {
		checkIndexBuild(t, again.IndexBuild, cfg)
	}
	if d, err := os.ReadFile(doc); err != nil || !strings.Contains(string(d), "## Building an index") || !strings.Contains(string(d), cmd) {
		t.Errorf("the doc after -index-build-only lacks the section or its command (%v):\n%s", err, d)
	}

	if azuriteMissing != "" {
		tabletest.Missing(t, azuriteMissing)
	}
}

// checkIndex checks that the index's embedded workloads produced every
// figure: the filter on its six systems, the writes on four, the builds
// and the heap per entry.
func checkIndex(t *testing.T, x *indexResults, cfg config) {
	t.Helper()
	if x == nil {
		t.Fatal("no index figures")
	}
	for _, s := range indexFilterSystems {
		checkFigure(t, x.Filter, wFull, s, cfg.Rounds)
	}
	for _, w := range []string{wInsert, wTx100} {
		for _, s := range indexWriteSystems {
			checkFigure(t, x.Write, w, s, cfg.Rounds)
		}
	}
	if len(x.Filter) != 6 || len(x.Write) != 8 {
		t.Errorf("index: %d filter figures, %d write figures; want 6 and 8", len(x.Filter), len(x.Write))
	}
	for _, s := range []string{sLtMemIx, sLtPebIx, sSQLiteIx} {
		if x.BuildSeconds[s] <= 0 {
			t.Errorf("index build on %s: %v s", s, x.BuildSeconds[s])
		}
	}
	if x.HeapPerEntry <= 0 || x.Entries != cfg.Data.n() {
		t.Errorf("index: %v heap bytes per entry over %d entries", x.HeapPerEntry, x.Entries)
	}
}

// checkIndexHTTP checks the filter over HTTP on the server started with
// --index, on the one without, and on Azurite when it ran.
func checkIndexHTTP(t *testing.T, x *indexResults, azurite bool) {
	t.Helper()
	if x == nil {
		return // checkIndex reported it
	}
	servers := []string{hLtMemIx, hLtMem}
	if azurite {
		servers = append(servers, hAzurit)
	}
	for _, s := range servers {
		if f := findHTTP(x.HTTP, hwFull, s); f == nil || sum(f.Ops) == 0 || f.MedOpsSec <= 0 {
			t.Errorf("HTTP index workload on %s: %+v", s, f)
		}
	}
	if len(x.HTTP) != len(servers) || x.Server == nil || x.Server.LoadSeconds <= 0 || x.Server.PeakRSS <= 0 {
		t.Errorf("HTTP index workload: %d figures, want %d; server %+v", len(x.HTTP), len(servers), x.Server)
	}
}

// checkFeed checks that the feed's workloads produced every figure.
func checkFeed(t *testing.T, f *feedResults, cfg config) {
	t.Helper()
	if f == nil {
		t.Fatal("no feed figures")
	}
	for _, w := range feedWriteWorkloads {
		for _, s := range []string{sMemOff, sMemOn, sPebOff, sPebOn} {
			checkFigure(t, f.Write, w, s, cfg.FeedWriteRounds)
		}
	}
	if len(f.Write) != 4*len(feedWriteWorkloads) {
		t.Errorf("%d feed write figures, want %d", len(f.Write), 4*len(feedWriteWorkloads))
	}
	if len(f.Latency) != 4 {
		t.Errorf("feed latency: %+v", f.Latency)
	}
	for _, l := range f.Latency {
		if len(l.P50Ns) != cfg.Rounds || l.MedP99 < l.MedP50 || l.Writes != cfg.FeedDeliveries {
			t.Errorf("feed latency %s to %d: %+v", l.System, l.Watchers, l)
		}
	}
	for _, s := range []string{sLtMem, sLtPeb} {
		checkFigure(t, f.CatchUp, wCatchUp, s, cfg.Rounds)
		if b := f.BytesPerChange[s]; b <= 0 {
			t.Errorf("feed bytes per change on %s: %v", s, b)
		}
	}
	for _, c := range f.CatchUp {
		for _, n := range c.Ops {
			if n < cfg.FeedCatchUp {
				t.Errorf("catch-up on %s read %d changes, want %d", c.System, n, cfg.FeedCatchUp)
			}
		}
	}
}

func checkFigure(t *testing.T, figs []figure, workload, system string, rounds int) {
	t.Helper()
	for _, f := range figs {
		if f.Workload == workload && f.System == system {
			if len(f.NsPerOp) != rounds && workload != wReopen {
				t.Errorf("%s on %s: %d rounds, want %d", workload, system, len(f.NsPerOp), rounds)
			}
			if f.Median <= 0 || sum(f.Ops) == 0 {
				t.Errorf("%s on %s: %+v", workload, system, f)
			}
			return
		}
	}
	t.Errorf("%s on %s: no figure", workload, system)
}

// checkSVG checks that the chart is well-formed XML with an svg root and a
// bar per ratio.
func checkSVG(t *testing.T, path string, ratios int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	root, rects := "", 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("ratios.svg: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			if se.Name.Local == "rect" {
				rects++
			}
		}
	}
	if root != "svg" || rects != ratios+1 { // the background and a bar per ratio
		t.Errorf("ratios.svg: root %q, %d rects, want svg and %d", root, rects, ratios+1)
	}
}

func TestPairedRatio(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		want float64
	}{
		// The median of the per-round ratios, not the ratio of medians
		// (which would be 20/10 = 2).
		{[]float64{10, 20, 90}, []float64{10, 5, 30}, 3},
		// A round with a zero on either side is left out.
		{[]float64{0, 20, 30}, []float64{10, 10, 10}, 2.5},
		{[]float64{10, 20, 30}, []float64{10, 0, 10}, 2},
		// No usable round: the quotient of the medians.
		{[]float64{0, 20, 30}, []float64{10, 0, 0}, 0},
		{[]float64{4, 6}, []float64{1, 2, 3}, 2.5},
		{nil, []float64{1}, 0},
	} {
		if got := pairedRatio(c.a, c.b); got != c.want {
			t.Errorf("pairedRatio(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	// The spread: the smallest and largest per-round ratios.
	if v, lo, hi := pairedRatios([]float64{10, 20, 90}, []float64{10, 5, 30}); v != 3 || lo != 1 || hi != 4 {
		t.Errorf("pairedRatios = %v, %v, %v; want 3, 1, 4", v, lo, hi)
	}
}

// TestPairedRun: the two systems take turns, each as many operations as
// the other, and each is timed by its own operations: one twice as slow
// as the other shows twice the time per operation.
func TestPairedRun(t *testing.T) {
	var order []int
	spin := func(k int, d time.Duration) func(int) error {
		return func(int) error {
			if len(order) == 0 || order[len(order)-1] != k {
				order = append(order, k)
			}
			for t0 := time.Now(); time.Since(t0) < d; {
			}
			return nil
		}
	}
	n, took, err := pairedRun(200*time.Millisecond, 1<<20, 1, [2]func(int) error{spin(0, 100*time.Microsecond), spin(1, 200*time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	if d := n[0] - n[1]; d < 0 || d > 2*int(feedSlice/(100*time.Microsecond)) {
		t.Errorf("operations %v: not turn for turn", n)
	}
	if r := (took[1].Seconds() / float64(n[1])) / (took[0].Seconds() / float64(n[0])); r < 1.5 || r > 2.5 {
		t.Errorf("time per operation %v / %v: ratio %.2f, want about 2", took[1]/time.Duration(n[1]), took[0]/time.Duration(n[0]), r)
	}
	if len(order) < 4 || order[0] != 1 {
		t.Errorf("turns %v: want many, system 1 first", order)
	}
	// max bounds each system's operations.
	n, _, err = pairedRun(time.Second, 10, 0, [2]func(int) error{spin(0, 0), spin(1, 0)})
	if err != nil || n != [2]int{10, 10} {
		t.Errorf("with max 10: %v, %v", n, err)
	}
	// An operation's error ends the run.
	boom := errors.New("boom")
	if _, _, err := pairedRun(time.Second, 100, 0, [2]func(int) error{spin(0, 0), func(int) error { return boom }}); !errors.Is(err, boom) {
		t.Errorf("error %v, want boom", err)
	}
}

// TestLoadNote checks that the report says other work shared the machine
// only when the load average shows it.
func TestLoadNote(t *testing.T) {
	for _, c := range []struct {
		start, end string
		shared     bool
	}{
		{"0.50 0.40 0.30", "1.20 0.80 0.50", false},
		{"1.90 1.00 1.00", "1.10 1.00 1.00", false},
		{"6.43 2.64 1.27", "1.00 1.00 1.00", true},
		{"1.00 1.00 1.00", "9.01 8.27 5.71", true},
	} {
		note := loadNote(machine{NProc: 2, LoadStart: c.start, LoadEnd: c.end})
		if got := strings.Contains(note, "other work shared the machine"); got != c.shared {
			t.Errorf("load %s, %s: note %q", c.start, c.end, note)
		}
	}
}

// checkIndexBuild checks that the index build's workloads produced every
// figure.
func checkIndexBuild(t *testing.T, f *indexBuildResults, cfg config) {
	t.Helper()
	if f == nil || len(f.Engines) != 2 {
		t.Fatalf("index build figures: %+v", f)
	}
	for _, e := range f.Engines {
		if e.Entries != indexBuildShape(cfg.IndexBuildEntities).n() || e.BuildRate <= 0 || e.EntryBytes <= 0 || len(e.AloneP99) != cfg.Rounds || len(e.BuildP99) != cfg.Rounds || len(e.Rebuild) != cfg.Rounds || e.P99Ratio <= 0 {
			t.Errorf("index build figures of %s: %+v", e.System, e)
		}
		if (e.System == sLtMem) != (e.HeapPerEntry != 0) || (e.System == sLtPeb) != (e.DiskPerEntry > 0) {
			t.Errorf("index build bytes of %s: heap %v, disk %v", e.System, e.HeapPerEntry, e.DiskPerEntry)
		}
	}
}
