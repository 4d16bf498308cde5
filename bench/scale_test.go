package main

import (
	"os"

	"github.com/localtable/localtable/filter"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMain lets the test binary act as the program's child: -scale runs
// os.Executable() with -child, which in a test is this binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-child" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestScale runs the scaling measurements at two tiny sizes, each system
// in a child process, and checks their figures and outputs: every
// workload at every size, a peak RSS per process, bytes on disk for the
// stores on disk, the section and its chart.
func TestScale(t *testing.T) {
	cfg := tinyConfig()
	sizes := []int{300, 600}
	sr, err := runScale(cfg, sizes, scaleSystems, 0, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.Missing) > 0 {
		t.Fatalf("missing: %q", sr.Missing)
	}
	if len(sr.Points) != len(sizes)*len(scaleSystems) {
		t.Fatalf("%d points, want %d", len(sr.Points), len(sizes)*len(scaleSystems))
	}
	for _, pt := range sr.Points {
		if !slices.Contains(sizes, pt.Entities) || pt.PeakRSS <= 0 || pt.LoadSeconds <= 0 {
			t.Errorf("%s at %d: %+v", pt.System, pt.Entities, pt)
		}
		if (pt.System == sLtMem) != (pt.DiskBytes == 0) {
			t.Errorf("%s at %d: %d bytes on disk", pt.System, pt.Entities, pt.DiskBytes)
		}
		if pt.System == sLtPeb && (pt.TableBytes <= 0 || pt.TableBytes > pt.DiskBytes) {
			t.Errorf("pebble at %d: %d bytes of tables of %d", pt.Entities, pt.TableBytes, pt.DiskBytes)
		}
		if pt.System == sLtMem && pt.HeapPerEntity <= 0 {
			t.Errorf("memory at %d: heap per entity %v", pt.Entities, pt.HeapPerEntity)
		}
		for _, w := range scaleWorkloads {
			if w == wReopen && pt.System == sLtMem {
				continue
			}
			checkFigure(t, pt.Figures, w, pt.System, cfg.Rounds)
		}
		if len(pt.Figures) > 0 && pt.Figures[0].System != pt.System {
			t.Errorf("point of %s holds figures of %s", pt.System, pt.Figures[0].System)
		}
	}
	res := &results{Mode: "tiny", Config: cfg, Scaling: sr}
	sr.Command = "cd bench && go run . -scale 300,600"
	out := t.TempDir()
	if err := writeOutputs(res, out, ""); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"## How cost grows with size", "](scaling.svg)", "| point get, localtable pebble |", "| bbolt: bytes per entity |", "| localtable pebble: peak RSS |"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("results.md lacks %q", s)
		}
	}
	svg, err := os.ReadFile(filepath.Join(out, "scaling.svg"))
	if err != nil {
		t.Fatal(err)
	}
	// A line per system in each panel of a workload, and of bytes.
	if n := strings.Count(string(svg), "<polyline"); n != (len(scaleWorkloads)+1)*len(scaleSystems)-1 {
		t.Errorf("scaling.svg: %d lines, want %d", n, (len(scaleWorkloads)+1)*len(scaleSystems)-1)
	}
}

// TestShapeOf checks the sizes -entities and -scale take.
func TestShapeOf(t *testing.T) {
	for n, want := range map[int]shape{300: {1, 300}, 2000: {1, 2000}, 20000: {10, 2000}, 2_000_000: {1000, 2000}, 10_000_000: {5000, 2000}} {
		if got, err := shapeOf(n); err != nil || got != want {
			t.Errorf("shapeOf(%d) = %v, %v; want %v", n, got, err, want)
		}
	}
	for _, n := range []int{0, -1, 3000, 2_001_000, 10_002_000} {
		if _, err := shapeOf(n); err == nil {
			t.Errorf("shapeOf(%d): no error", n)
		}
	}
	// Up to 2,000,000 entities the PartitionKeys sort as their numbers (the
	// largest is p999); above, they stay distinct.
	if pk(999) >= "p999~" || pk(998) >= pk(999) {
		t.Errorf("pk(999) = %q", pk(999))
	}
	seen := map[string]bool{}
	for p := range 5000 {
		if seen[pk(p)] {
			t.Fatalf("pk(%d) = %q again", p, pk(p))
		}
		seen[pk(p)] = true
	}
}

// TestWritesKeepSize checks that the write workloads leave the store at
// the data set's size: what they insert is removed.
func TestWritesKeepSize(t *testing.T) {
	cfg := tinyConfig()
	e := &embedded{cfg: cfg, dir: t.TempDir(), logf: t.Logf, res: &results{}}
	defer e.close()
	if err := e.load(sLtMem, sLtPeb); err != nil {
		t.Fatal(err)
	}
	pks := []string{pk(0), pk(1)}
	if err := e.insertWorkload([]string{sLtMem, sLtPeb}, pks); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{sLtMem, sLtPeb} {
		f := find(e.res.Embedded, wInsert, name)
		if f == nil || name == sLtMem && sum(f.Ops) <= cfg.Data.n()/10 {
			t.Fatalf("%s: %+v: too few inserts to test the chunks", name, f)
		}
		n, err := e.store(name).(*ltStore).count(filter.Const(true))
		if err != nil || n != cfg.Data.n() {
			t.Errorf("%s after %d inserts: %d entities (%v), want %d", name, sum(f.Ops), n, err, cfg.Data.n())
		}
	}
}

// TestIndexWritesKeepSize checks that the index's write workloads, which
// run on the main localtable stores beside the indexed ones, leave them
// at the data set's size, as the main write workloads do.
func TestIndexWritesKeepSize(t *testing.T) {
	cfg := tinyConfig()
	e := &embedded{cfg: cfg, dir: t.TempDir(), logf: t.Logf, res: &results{}}
	defer e.close()
	if err := e.load(sLtMem, sLtPeb, sSQLite); err != nil {
		t.Fatal(err)
	}
	if err := e.indexWorkloads(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{sLtMem, sLtPeb} {
		ins, tx := find(e.res.Index.Write, wInsert, name), find(e.res.Index.Write, wTx100, name)
		if ins == nil || tx == nil || sum(ins.Ops) == 0 || sum(tx.Ops) == 0 {
			t.Fatalf("%s: the index's writes were not measured: %+v, %+v", name, ins, tx)
		}
		n, err := e.store(name).(*ltStore).count(filter.Const(true))
		if err != nil || n != cfg.Data.n() {
			t.Errorf("%s after the index's %d inserts and %d transactions: %d entities (%v), want %d", name, sum(ins.Ops), sum(tx.Ops), n, err, cfg.Data.n())
		}
	}
}

// TestScaleHot runs the hot-path systems of -scale-hot at two sizes: each
// reads only (get, range, full scan) in a child of its own, and the
// report says how the in-place full scan grew against the raw B-tree's.
func TestScaleHot(t *testing.T) {
	cfg := tinyConfig()
	sizes := []int{300, 600}
	sr, err := runScale(cfg, sizes, scaleHotSystems, 0, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.Missing) > 0 || len(sr.Points) != len(sizes)*len(scaleHotSystems) {
		t.Fatalf("%d points, missing %q", len(sr.Points), sr.Missing)
	}
	for _, pt := range sr.Points {
		for _, w := range []string{wGet, wRange, wFull} {
			checkFigure(t, pt.Figures, w, pt.System, cfg.Rounds)
		}
		for _, f := range pt.Figures {
			if f.System != pt.System || f.Workload == wInsert {
				t.Errorf("point of %s holds %s of %s", pt.System, f.Workload, f.System)
			}
		}
	}
	md := scaleMarkdown(&results{Scaling: sr}, "scaling.svg")
	for _, s := range []string{"| full-table filter, 1% match, localtable memory, in place |", "| full-table filter, 1% match, raw btree, no alloc |", "Target 2 (the in-place scan grows no faster than the raw B-tree's)"} {
		if !strings.Contains(md, s) {
			t.Errorf("the scaling section lacks %q:\n%s", s, md)
		}
	}
}
