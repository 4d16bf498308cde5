// Command bench is localtable's standard workload program: it measures
// the library and its server against the engines under it and against
// what an embedded or emulator user would otherwise pick, in one run,
// interleaved, and writes the figures as JSON, a markdown report and an
// SVG chart of the ratios.
//
//	cd bench && go run . [-quick] [-out DIR] [-doc FILE] [-azurite=false] [-entities N] [-feed-only | -index-only | -index-build-only [-index-build-entities N] | -scale SIZES [-scale-systems S,…]]
//
// It lives in a module of its own so that its peers (SQLite, bbolt, the
// SDK, Azurite) never become dependencies of the library's users. See
// README.md beside it for what each workload does.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/localtable/localtable"
)

func main() {
	quick := flag.Bool("quick", false, "the same workloads on 10,000 entities with short phases (CI)")
	out := flag.String("out", "results", "directory for results.json, results.md and ratios.svg")
	doc := flag.String("doc", "", "also write the markdown report to this file (e.g. ../BENCHMARKS.md)")
	az := flag.Bool("azurite", true, "compare against Azurite when node and npm are present")
	render := flag.String("render", "", "run nothing: write the outputs again from this results.json")
	feedOnlyFlag := flag.Bool("feed-only", false, "run only the change feed's workloads; keep the other figures of -out's results.json")
	entities := flag.Int("entities", 0, "the embedded data set's size: a multiple of 2,000 up to 10,000,000 (default 200,000; 10,000 with -quick)")
	scale := flag.String("scale", "", "run only the scaling measurements at these sizes (e.g. 20000,200000,2000000), each system in a process of its own; keep the other figures of -out's results.json")
	scaleSystemsFlag := flag.String("scale-systems", strings.Join(scaleSystems, ","), "with -scale: the systems to measure, comma-separated (empty: none, with -scale-hot)")
	scaleHot := flag.Bool("scale-hot", false, "with -scale: also measure the memory engine's in-place reads and the raw B-tree's read into a reused buffer at each size")
	scaleTimeout := flag.Duration("scale-timeout", 30*time.Minute, "with -scale: the longest one system at one size may take")
	child := flag.String("child", "", "internal (-scale): load this one system, run its workloads, print its figures as JSON")
	childConfig := flag.String("child-config", "", "internal (-scale): the child's configuration, as JSON")
	embeddedOnlyFlag := flag.Bool("embedded-only", false, "run only the embedded workloads (not the index's); keep the other figures of -out's results.json")
	httpOnlyFlag := flag.Bool("http-only", false, "run only the workloads over HTTP (the servers' and the index's server); keep the other figures of -out's results.json")
	indexOnlyFlag := flag.Bool("index-only", false, "run only the secondary index's workloads; keep the other figures of -out's results.json")
	indexBuildOnlyFlag := flag.Bool("index-build-only", false, "run only the index build's workloads; keep the other figures of -out's results.json")
	indexBuildEntities := flag.Int("index-build-entities", 0, "the size of the table the index build's workloads build on (default 1,000,000; 50,000 with -quick)")
	indexRecordsFlag := flag.String("index-records", "default", "which indexes hold their entities' records (localtable's Options.IndexRecords): default (on memory), always (on pebble too) or never")
	flag.Parse()
	switch *indexRecordsFlag {
	case "default":
	case "always":
		indexRecords = localtable.IndexRecordsAlways
	case "never":
		indexRecords = localtable.IndexRecordsNever
	default:
		fmt.Fprintf(os.Stderr, "bench: -index-records %q: want default, always or never\n", *indexRecordsFlag)
		os.Exit(2)
	}
	if *render != "" {
		if err := rerender(*render, *out, *doc); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	cfg := fullConfig()
	if *quick {
		cfg = quickConfig()
	}
	cfg.Azurite = *az
	if *indexBuildEntities > 0 {
		cfg.IndexBuildEntities = *indexBuildEntities
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	// cmdline is the command that reproduces this run, in a mode (extra).
	cmdline := func(az bool, extra string) string {
		c := command(*quick, *out, *doc, az)
		if *entities != 0 {
			c += fmt.Sprintf(" -entities %d", *entities)
		}
		return c + extra
	}
	if *entities != 0 {
		s, err := shapeOf(*entities)
		if err != nil {
			fail(err)
		}
		cfg.Data = s
	}
	if *child != "" {
		c, err := scaleConfig(cfg, cfg.Data.n())
		if err == nil && *childConfig != "" {
			err = json.Unmarshal([]byte(*childConfig), &c)
		}
		if err == nil {
			err = runChild(c, *child, logf)
		}
		if err != nil {
			fail(err)
		}
		return
	}
	if *scale != "" {
		sizes, err := parseSizes(*scale)
		if err != nil {
			fail(err)
		}
		cmd := cmdline(true, " -scale "+*scale)
		var systems []string
		if *scaleSystemsFlag != "" { // none: the hot-path systems alone (-scale-hot)
			systems = strings.Split(*scaleSystemsFlag, ",")
		}
		for _, s := range systems {
			if !slices.Contains(scaleSystems, s) {
				fail(fmt.Errorf("-scale-systems: %q is not one of %q", s, scaleSystems))
			}
		}
		if *scaleHot {
			systems = append(systems, scaleHotSystems...)
			cmd += " -scale-hot"
		}
		if *scaleSystemsFlag != strings.Join(scaleSystems, ",") {
			cmd += " -scale-systems '" + *scaleSystemsFlag + "'"
		}
		if err := scaleOnly(cfg, sizes, systems, *scaleTimeout, *out, *doc, cmd, logf); err != nil {
			fail(err)
		}
		logf("wrote %s", *out)
		return
	}
	if *indexBuildOnlyFlag {
		cmd := cmdline(true, " -index-build-only")
		if *indexBuildEntities > 0 {
			cmd += fmt.Sprintf(" -index-build-entities %d", *indexBuildEntities)
		}
		if err := indexBuildOnly(cfg, *out, *doc, cmd, logf); err != nil {
			fail(err)
		}
		logf("wrote %s", *out)
		return
	}
	if *feedOnlyFlag {
		if err := feedOnly(cfg, *out, *doc, cmdline(true, " -feed-only"), logf); err != nil {
			fail(err)
		}
		logf("wrote %s", *out)
		return
	}
	if *httpOnlyFlag {
		if err := httpOnly(cfg, *out, *doc, cmdline(*az, " -http-only"), logf); err != nil {
			fail(err)
		}
		logf("wrote %s", *out)
		return
	}
	if *embeddedOnlyFlag {
		if err := embeddedOnly(cfg, *out, *doc, cmdline(true, " -embedded-only"), logf); err != nil {
			fail(err)
		}
		logf("wrote %s", *out)
		return
	}
	if *indexOnlyFlag {
		if err := indexOnly(cfg, *out, *doc, cmdline(*az, " -index-only"), logf); err != nil {
			fail(err)
		}
		logf("wrote %s", *out)
		return
	}
	res, err := run(cfg, logf)
	if err != nil {
		fail(err)
	}
	res.Command = cmdline(*az, "")
	// The scaling figures are measured apart (-scale): keep them.
	if b, err := os.ReadFile(filepath.Join(*out, "results.json")); err == nil {
		var old results
		if json.Unmarshal(b, &old) == nil {
			res.Scaling = old.Scaling
		}
	}
	if err := writeOutputs(res, *out, *doc); err != nil {
		fail(err)
	}
	logf("wrote %s in %.0fs", *out, res.Seconds)
}

// rerender writes the outputs of a past run from its results.json, with
// the ratios computed again (the figures themselves are kept).
func rerender(path, out, doc string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var res results
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	computeRatios(&res)
	return writeOutputs(&res, out, doc)
}

// command is the command line that reproduces a run.
func command(quick bool, out, doc string, az bool) string {
	c := "cd bench && go run ."
	if quick {
		c += " -quick"
	}
	if out != "results" {
		c += " -out " + out
	}
	if doc != "" {
		c += " -doc " + doc
	}
	if !az {
		c += " -azurite=false"
	}
	switch indexRecords {
	case localtable.IndexRecordsAlways:
		c += " -index-records always"
	case localtable.IndexRecordsNever:
		c += " -index-records never"
	}
	return c
}

// benchDir returns the directory of the bench module: the current
// directory, which must hold its go.mod.
func benchDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil || !strings.Contains(string(b), "module github.com/localtable/localtable/bench\n") {
		return "", errors.New("run it from the bench directory of the repository (cd bench && go run .)")
	}
	return dir, nil
}

// run runs every workload of cfg and returns the figures.
func run(cfg config, logf func(string, ...any)) (*results, error) {
	t0 := time.Now()
	dir, err := benchDir()
	if err != nil {
		return nil, err
	}
	root := filepath.Dir(dir)
	work, err := os.MkdirTemp("", "localtable-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	res := &results{Mode: cfg.Mode, Started: t0.UTC(), Config: cfg, Machine: machineInfo(), Versions: versions(root)}
	logf("%s run: %d entities embedded, %d over HTTP, %d rounds; work dir %s", cfg.Mode, cfg.Data.n(), cfg.HTTPData.n(), cfg.Rounds, work)

	e := &embedded{cfg: cfg, dir: work, logf: logf, res: res}
	err = e.load()
	if err == nil {
		err = e.run()
	}
	if err == nil {
		if sq, ok := e.store(sSQLite).(*sqliteStore); ok {
			var v string
			if sq.db.QueryRow("select sqlite_version()").Scan(&v) == nil {
				res.Versions["SQLite"] += " (SQLite " + v + ")"
			}
		}
	}
	e.close()
	e = nil
	if err != nil {
		return nil, err
	}
	runtime.GC()
	if res.Feed, err = runFeed(cfg, work, logf); err != nil {
		return nil, err
	}
	runtime.GC()
	if res.IndexBuild, err = runIndexBuild(cfg, work, logf); err != nil {
		return nil, err
	}
	runtime.GC()

	var az *azurite
	if cfg.Azurite {
		var skip string
		az, skip = setupAzurite(dir, cfg.InstallTimeout, logf)
		if skip != "" {
			logf("%s", skip)
			res.Skipped = append(res.Skipped, skip)
		} else {
			res.Versions["Azurite"] = az.version + " (node " + az.node + ")"
		}
	} else {
		res.Skipped = append(res.Skipped, "Azurite: not requested (-azurite=false)")
	}
	if err := runHTTP(cfg, root, work, az, res, logf); err != nil {
		return nil, err
	}
	computeRatios(res)
	res.Seconds = time.Since(t0).Seconds()
	res.Machine.LoadEnd = loadAvg()
	return res, nil
}

// machineInfo describes this machine from /proc.
func machineInfo() machine {
	m := machine{NProc: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var kb int64
			if n, _ := fmt.Sscanf(sc.Text(), "MemTotal: %d kB", &kb); n == 1 {
				m.MemTotal = kb << 10
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.LoadStart = loadAvg()
	return m
}

// loadAvg returns the 1, 5 and 15 minute load averages, or "".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}

// versions names the versions of Go, localtable and every peer.
func versions(root string) map[string]string {
	v := map[string]string{"Go": runtime.Version()}
	rev, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err == nil {
		v["localtable"] = "commit " + strings.TrimSpace(string(rev))
		if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
			v["localtable"] += " (with uncommitted changes)"
		}
	}
	names := map[string]string{
		"github.com/cockroachdb/pebble/v2":                    "pebble",
		"github.com/tidwall/btree":                            "tidwall/btree",
		"go.etcd.io/bbolt":                                    "bbolt",
		"modernc.org/sqlite":                                  "SQLite",
		"github.com/Azure/azure-sdk-for-go/sdk/data/aztables": "Go SDK (aztables)",
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if n, ok := names[d.Path]; ok {
				v[n] = d.Path + " " + d.Version
			}
		}
	}
	return v
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
