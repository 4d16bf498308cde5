package localtable

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortCandidates orders the distinct keys of candidates as bytes.Compare
// does, whatever their number, lengths (shorter and longer than the
// 16-byte prefix it sorts by first), shared prefixes, duplicates and
// first order (random, sorted, reversed, all equal), and so does a
// reused planBuf.
func TestSortCandidates(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	key := func() []byte {
		k := []byte("p0\x00\x01r")[:r.IntN(6)]
		for range r.IntN(26) {
			k = append(k, "ab\x00\x01"[r.IntN(4)])
		}
		return k
	}
	pb := new(planBuf)
	for _, n := range []int{0, 1, 2, 3, 12, 13, 40, 199, 1000, 5000} {
		for _, first := range []string{"random", "sorted", "reversed", "equal"} {
			cs := make([]candidate, n)
			for i := range cs {
				cs[i].key = key()
				if first == "equal" {
					cs[i].key = []byte("p0\x00\x01r1\x00\x01")
				}
			}
			switch first {
			case "sorted":
				slices.SortFunc(cs, func(a, b candidate) int { return bytes.Compare(a.key, b.key) })
			case "reversed":
				slices.SortFunc(cs, func(a, b candidate) int { return bytes.Compare(b.key, a.key) })
			}
			var want [][]byte
			for _, c := range cs {
				want = append(want, c.key)
			}
			slices.SortFunc(want, bytes.Compare)
			want = slices.CompactFunc(want, bytes.Equal)
			order := sortCandidates(cs, pb)
			if len(order) != len(want) {
				t.Fatalf("%d %s candidates: %d in order, want %d", n, first, len(order), len(want))
			}
			for k, i := range order {
				if !bytes.Equal(cs[i].key, want[k]) {
					t.Fatalf("%d %s candidates: order[%d] is %q, want %q", n, first, k, cs[i].key, want[k])
				}
			}
		}
	}
}
