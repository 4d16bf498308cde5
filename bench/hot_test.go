package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHotReads checks that the hot-path read views (localtable's in-place
// reads, the bare engines' reads into a reused buffer) return what the
// stores they view return on the same queries, that they fail on an
// absent entity as those do, and that a get on the memory engine's
// allocates nothing.
func TestHotReads(t *testing.T) {
	cfg := tinyConfig()
	s := cfg.Data
	e := &embedded{cfg: cfg, dir: t.TempDir(), logf: t.Logf, res: &results{}}
	defer e.close()
	if err := e.load(sLtMem, sRawTree, sLtPeb, sRawPeb); err != nil {
		t.Fatal(err)
	}
	if got := e.names(hotNames()...); len(got) != len(hotSystems) {
		t.Fatalf("hot-path systems loaded: %q", got)
	}
	for _, h := range hotSystems {
		hot, base := e.store(h[0]), e.store(h[1])
		for _, q := range []struct{ pk, lo, hi string }{
			{pk(0), rk(0), rk(100)}, {pk(1), rk(s.Rows - 50), rk(s.Rows + 50)}, {pk(0), rk(7), rk(7)},
		} {
			n, err := hot.rangeQuery(q.pk, q.lo, q.hi)
			want, werr := base.rangeQuery(q.pk, q.lo, q.hi)
			if err != nil || werr != nil || n != want {
				t.Errorf("%s: range %v: %d (%v), %s: %d (%v)", h[0], q, n, err, h[1], want, werr)
			}
		}
		n, err := hot.fullFilter()
		want, werr := base.fullFilter()
		if err != nil || werr != nil || n != want {
			t.Errorf("%s: full filter: %d (%v), %s: %d (%v)", h[0], n, err, h[1], want, werr)
		}
		wantFull := s.n()
		if base.filters() {
			wantFull = s.scoreMatches()
		}
		if n != wantFull || hot.filters() != base.filters() {
			t.Errorf("%s: full filter: %d entities, want %d", h[0], n, wantFull)
		}
		if err := hot.get(pk(1), rk(3)); err != nil {
			t.Errorf("%s: get: %v", h[0], err)
		}
		if err := hot.get(pk(1), "absent"); err == nil {
			t.Errorf("%s: get of an absent entity: no error", h[0])
		}
	}
	// On the memory engine: pebble's reads draw on sync.Pools, which the
	// race detector (CI runs this test with -race) makes drop items.
	for _, name := range []string{sRawTreeNA, sLtMemRow} {
		st := e.store(name)
		p, r := pk(2), rk(5)
		st.get(pk(0), rk(0)) // sizes the buffer
		if n := testing.AllocsPerRun(100, func() {
			if err := st.get(p, r); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: get: %.1f allocations", name, n)
		}
	}
}

// TestHotVerdict checks the verdict on a speed target from a time ratio
// (in place ÷ raw) and its rounds' spread.
func TestHotVerdict(t *testing.T) {
	for _, c := range []struct {
		r     ratio
		speed float64
		want  string
	}{
		{ratio{Value: 1.2, Lo: 1.1, Hi: 1.3}, 0.7, "met"},                    // speed 0.83
		{ratio{Value: 2, Lo: 1.9, Hi: 2.1}, 0.7, "not met"},                  // speed 0.5
		{ratio{Value: 1.4, Lo: 1.3, Hi: 1.5}, 0.7, "met (spread straddles)"}, // 0.71, rounds 0.67–0.77
		{ratio{Value: 1.5, Lo: 1.3, Hi: 1.6}, 0.7, "not met (spread straddles)"},
		{ratio{Value: 1.5, Lo: 1.45, Hi: 1.6}, 0.7, "not met"},
	} {
		if got := hotVerdict(&c.r, c.speed); got != c.want {
			t.Errorf("hotVerdict(%+v, %v) = %q, want %q", c.r, c.speed, got, c.want)
		}
	}
}

// TestEmbeddedOnly checks that -embedded-only replaces the embedded
// figures, adds the hot-path reads, and keeps the other sections of the
// results it runs on.
func TestEmbeddedOnly(t *testing.T) {
	cfg := tinyConfig()
	out := t.TempDir()
	kept := &results{Mode: "kept", Versions: map[string]string{}, Config: cfg,
		Embedded: []figure{{Workload: wGet, System: "old", NsPerOp: []float64{1}, Median: 1}},
		Feed:     &feedResults{Command: "feed cmd"}}
	res := runApart(t, kept, out, func() error { return embeddedOnly(cfg, out, "", "the command", t.Logf) })
	if res.Mode != "kept" || res.Feed == nil || res.Feed.Command != "feed cmd" || res.Index != nil {
		t.Errorf("the other sections were not kept: %+v", res)
	}
	if find(res.Embedded, wGet, "old") != nil || find(res.Embedded, wGet, sLtMemRow) == nil || find(res.Embedded, wFull, sRawPebNA) == nil || len(res.Memory) != 2 {
		t.Errorf("embedded figures: %+v", res.Embedded)
	}
	if res.EmbeddedApart == nil || res.EmbeddedApart.Command != "the command" {
		t.Errorf("embedded_apart: %+v", res.EmbeddedApart)
	}
	if findRatio(&res, gMemHot, wRange) <= 0 {
		t.Errorf("no ratio %s", gMemHot)
	}
	md, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil || !strings.Contains(string(md), "measured apart from the rest of the report") || !strings.Contains(string(md), "## Hot-path reads") {
		t.Errorf("results.md (%v):\n%s", err, md)
	}
}

// TestHTTPOnly checks that -http-only replaces the figures over HTTP (the
// servers', and the index's server's), keeps the other sections of the
// results it runs on, and says how the HTTP figures were measured.
func TestHTTPOnly(t *testing.T) {
	cfg := tinyConfig()
	cfg.Azurite = false
	out := t.TempDir()
	kept := &results{Mode: "kept", Versions: map[string]string{}, Config: cfg,
		Embedded: []figure{{Workload: wGet, System: "old", NsPerOp: []float64{1}, Median: 1}},
		HTTP:     []httpFigure{{Workload: hwGet, Server: "old"}},
		Index:    &indexResults{Entries: 7}}
	res := runApart(t, kept, out, func() error { return httpOnly(cfg, out, "", "the command", t.Logf) })
	if res.Mode != "kept" || find(res.Embedded, wGet, "old") == nil || res.Index == nil || res.Index.Entries != 7 {
		t.Errorf("the other sections were not kept: %+v", res)
	}
	if findHTTP(res.HTTP, hwGet, "old") != nil || findHTTP(res.HTTP, hwGet, hLtMem) == nil || len(res.Servers) != 2 || len(res.Index.HTTP) == 0 {
		t.Errorf("HTTP figures: %+v, servers %+v, index %+v", res.HTTP, res.Servers, res.Index.HTTP)
	}
	if res.HTTPApart == nil || res.HTTPApart.Command != "the command" {
		t.Errorf("http_apart: %+v", res.HTTPApart)
	}
	for _, s := range res.Servers {
		if s.Version != res.HTTPApart.Version {
			t.Errorf("server %s measured on %q, not this localtable (%q)", s.Server, s.Version, res.HTTPApart.Version)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil || !strings.Contains(string(md), "(and the servers' table below, and the index's over HTTP) were measured apart") {
		t.Errorf("results.md (%v):\n%s", err, md)
	}
}

// runApart writes kept as out's results.json, runs one of the measures
// made apart from a full run (-embedded-only, -http-only), and returns
// the results.json it leaves.
func runApart(t *testing.T, kept *results, out string, run func() error) results {
	t.Helper()
	b, err := json.Marshal(kept)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	if b, err = os.ReadFile(filepath.Join(out, "results.json")); err != nil {
		t.Fatal(err)
	}
	var res results
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return res
}
