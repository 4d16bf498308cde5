package storagetest

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/localtable/localtable/storage"
)

// seed is namespaced so that a test binary importing storagetest may still
// define its own -seed.
var seed = flag.Uint64("storagetest.seed", 1, "seed for the storagetest randomized model test (0: time-based)")

// model is the reference: a map plus its sorted keys.
type model map[string]string

func (m model) clone() model {
	c := make(model, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (m model) apply(o op) {
	switch o.kind {
	case 's':
		m[o.key] = o.val
	case 'd':
		delete(m, o.key)
	case 'r':
		for k := range m {
			if k >= o.key && k < o.val {
				delete(m, k)
			}
		}
	}
}

// sorted returns the pairs within [lower, upper) in ascending order.
func (m model) sorted(lower, upper []byte) []KV {
	in := inRange(lower, upper)
	var out []KV
	for k, v := range m {
		if kv := (KV{k, v}); in(kv) {
			out = append(out, kv)
		}
	}
	slices.SortFunc(out, func(a, b KV) int { return bytes.Compare([]byte(a.K), []byte(b.K)) })
	return out
}

// keyGen draws keys from two spaces: a tiny alphabet of short binary keys
// (many collisions, 0x00 and 0xFF bytes), and a wide numbered space (deep
// trees, long scans).
type keyGen struct{ r *rand.Rand }

func (g keyGen) key() string {
	if g.r.IntN(2) == 0 {
		const sym = "\x00ab\xff"
		n := 1 + g.r.IntN(3)
		k := make([]byte, n)
		for i := range k {
			k[i] = sym[g.r.IntN(len(sym))]
		}
		return string(k)
	}
	return fmt.Sprintf("n%05d", g.r.IntN(3000))
}

// narrowRange returns the bounds of a short range, usually of a few keys
// of the numbered space; now and then start > end.
func (g keyGen) narrowRange() (string, string) {
	if g.r.IntN(4) == 0 {
		k := g.key()
		return k, k + "\x00"
	}
	i := g.r.IntN(3000)
	return fmt.Sprintf("n%05d", i), fmt.Sprintf("n%05d", i+g.r.IntN(60)-5)
}

// bound returns a random bound: nil (unbounded) a quarter of the time.
func (g keyGen) bound() []byte {
	if g.r.IntN(4) == 0 {
		return nil
	}
	return []byte(g.key())
}

func (g keyGen) value() string {
	v := make([]byte, g.r.IntN(12))
	for i := range v {
		v[i] = byte(g.r.UintN(256))
	}
	return string(v)
}

func testRandomModel(t *testing.T, e storage.Engine) {
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -storagetest.seed=%d)", s, s)
	r := rand.New(rand.NewPCG(s, 0x10ca17ab1e))
	g := keyGen{r}
	m := model{}

	type snap struct {
		s storage.Snapshot
		m model
	}
	var snaps []snap
	defer func() {
		for _, sn := range snaps {
			sn.s.Close()
		}
	}()

	const batches = 400
	ops := 0
	for round := range batches {
		var batch []op
		for range 1 + r.IntN(24) {
			var o op
			switch p := r.IntN(100); {
			case p < 65:
				o = set(g.key(), g.value())
			case p < 92:
				o = del(g.key())
			case p < 99:
				o = delRange(g.narrowRange()) // may be reversed: a no-op
			default:
				o = delRange(g.key(), g.key()) // wide, may be reversed
			}
			batch = append(batch, o)
		}
		commit(t, e, batch...)
		for _, o := range batch {
			m.apply(o)
		}
		ops += len(batch)

		for range 3 {
			k := g.key()
			want, wok := m[k]
			got, gok := get(t, e, k)
			if gok != wok || got != want {
				t.Fatalf("round %d: Get(%q) = %q,%v; model %q,%v", round, k, got, gok, want, wok)
			}
		}
		if round%10 == 0 {
			checkModel(t, e, m, g, fmt.Sprintf("round %d", round))
		}
		if round%50 == 0 {
			s, err := e.NewSnapshot()
			if err != nil {
				t.Fatal(err)
			}
			snaps = append(snaps, snap{s, m.clone()})
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	checkModel(t, e, m, g, "final")
	for i, sn := range snaps {
		checkModel(t, sn.s, sn.m, g, fmt.Sprintf("snapshot %d", i))
	}
	t.Logf("%d ops in %d batches, %d keys at the end", ops, batches, len(m))
}

// checkModel compares full scans (both ways, random bounds) and random
// seek-and-walk sequences of r with m.
func checkModel(t *testing.T, r storage.Reader, m model, g keyGen, where string) {
	t.Helper()
	want := m.sorted(nil, nil)
	if got := scan(t, r, nil, nil, false); !kvSliceEqual(got, want) {
		t.Fatalf("%s: forward scan: got %d pairs, want %d\n%s", where, len(got), len(want), firstDiff(want, got))
	}
	if got := reversed(scan(t, r, nil, nil, true)); !kvSliceEqual(got, want) {
		t.Fatalf("%s: backward scan: got %d pairs, want %d\n%s", where, len(got), len(want), firstDiff(want, got))
	}
	for range 4 {
		lower, upper := g.bound(), g.bound()
		if lower != nil && upper != nil && bytes.Compare(lower, upper) > 0 {
			lower, upper = upper, lower
		}
		want := m.sorted(lower, upper)
		for _, rev := range []bool{false, true} {
			got := scan(t, r, lower, upper, rev)
			if rev {
				got = reversed(got)
			}
			if !kvSliceEqual(got, want) {
				t.Fatalf("%s: scan [%q, %q) reverse=%v: got %d, want %d\n%s", where, lower, upper, rev, len(got), len(want), firstDiff(want, got))
			}
		}
		walkModel(t, r, lower, upper, want, g, where)
	}
}

// walkModel seeks to random keys and takes random steps, following the
// expected position in want: -1 is before the first key, len(want) after
// the last.
func walkModel(t *testing.T, r storage.Reader, lower, upper []byte, want []KV, g keyGen, where string) {
	t.Helper()
	it := newIter(t, r, lower, upper)
	defer it.Close()
	n := len(want)
	for range 8 {
		var pos int
		var moved bool
		var what string
		switch g.r.IntN(4) {
		case 0:
			moved, pos, what = it.First(), 0, "First"
		case 1:
			moved, pos, what = it.Last(), n-1, "Last"
		default:
			k := g.key()
			eff := []byte(k)
			if lower != nil && bytes.Compare(eff, lower) < 0 {
				eff = lower
			}
			pos, _ = slices.BinarySearchFunc(want, eff, func(kv KV, k []byte) int { return bytes.Compare([]byte(kv.K), k) })
			moved, what = it.SeekGE([]byte(k)), fmt.Sprintf("SeekGE(%q)", k)
		}
		if pos < 0 {
			pos = -1 // Last on an empty range
		}
		for range 12 {
			ctx := fmt.Sprintf("%s: bounds [%q, %q): %s", where, lower, upper, what)
			if pos >= 0 && pos < n {
				wantAt(t, it, moved, ctx, want[pos].K, want[pos].V)
			} else {
				wantInvalid(t, it, moved, ctx)
			}
			if g.r.IntN(2) == 0 {
				moved, what = it.Next(), what+" Next"
				if pos < n {
					pos++
				}
			} else {
				moved, what = it.Prev(), what+" Prev"
				switch {
				case pos == n:
					pos = n - 1
				case pos >= 0:
					pos--
				}
			}
			if pos == -1 && n == 0 {
				pos = n // empty: before and after are both invalid
			}
		}
	}
}

func firstDiff(want, got []KV) string {
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i].String()
		}
		if i < len(got) {
			g = got[i].String()
		}
		if w != g {
			return fmt.Sprintf("first difference at %d: want %s, got %s", i, w, g)
		}
	}
	return "no difference"
}
