package tests

import (
	"fmt"
	"testing"

	"github.com/localtable/localtable"
)

// TestKeyRangeIntersect checks Intersect on every pair of ranges whose
// bounds come from a small set of keys, against a brute-force check on
// points: a point is in the intersection exactly when it is in both, and
// the intersection holds something exactly when some point is in both.
func TestKeyRangeIntersect(t *testing.T) {
	type named struct {
		name string
		k    localtable.Key
	}
	var bounds []named // the zero Key first: unbounded
	bounds = append(bounds, named{"∞", localtable.Key{}})
	for _, pk := range []string{"a", "b"} {
		bounds = append(bounds,
			named{"start(" + pk + ")", localtable.PartitionStart(pk)},
			named{"end(" + pk + ")", localtable.PartitionEnd(pk)})
		for _, rk := range []string{"", "m"} {
			bounds = append(bounds,
				named{fmt.Sprintf("at(%s,%s)", pk, rk), localtable.KeyAt(pk, rk)},
				named{fmt.Sprintf("after(%s,%s)", pk, rk), localtable.KeyAfter(pk, rk)})
		}
	}
	// The points: every bound, a key before them all, and entities
	// around and between the bounds.
	points := []localtable.Key{localtable.PartitionStart("")}
	type entity struct{ pk, rk string }
	var entities []entity
	for _, pk := range []string{"", "a", "a0", "aa", "b", "c"} {
		for _, rk := range []string{"", "0", "m", "m0", "z"} {
			entities = append(entities, entity{pk, rk})
			points = append(points, localtable.KeyAt(pk, rk))
		}
	}
	for _, b := range bounds[1:] {
		points = append(points, b.k)
	}
	// in is the definition of membership, written independently of
	// KeyRange: a zero start is below everything, a zero end above.
	in := func(r localtable.KeyRange, k localtable.Key) bool {
		return (r.Start.IsZero() || r.Start.Compare(k) <= 0) && (r.End.IsZero() || k.Compare(r.End) < 0)
	}
	var ranges []localtable.KeyRange
	var names []string
	for _, s := range bounds {
		for _, e := range bounds {
			ranges = append(ranges, localtable.KeyRange{Start: s.k, End: e.k})
			names = append(names, "["+s.name+", "+e.name+")")
		}
	}
	nonEmpty := 0
	for i, r := range ranges {
		for j, o := range ranges {
			got, ok := r.Intersect(o)
			anyIn := false
			for _, p := range points {
				both := in(r, p) && in(o, p)
				anyIn = anyIn || both
				if in(got, p) != both {
					t.Fatalf("%s ∩ %s = [%v, %v): point %v in both %v, in result %v", names[i], names[j], got.Start, got.End, p, both, in(got, p))
				}
			}
			for _, e := range entities {
				if got.Contains(e.pk, e.rk) != (r.Contains(e.pk, e.rk) && o.Contains(e.pk, e.rk)) {
					t.Fatalf("%s ∩ %s: Contains(%q, %q) disagrees", names[i], names[j], e.pk, e.rk)
				}
			}
			if ok != anyIn || ok == got.Empty() {
				t.Fatalf("%s ∩ %s: ok = %v, Empty = %v; a point in both: %v", names[i], names[j], ok, got.Empty(), anyIn)
			}
			if !ok && got.Start.IsZero() && got.End.IsZero() {
				t.Fatalf("%s ∩ %s: an empty intersection returned as the whole table", names[i], names[j])
			}
			if ok {
				nonEmpty++
			}
			if back, _ := o.Intersect(r); back.Start.Compare(got.Start) != 0 || back.End.Compare(got.End) != 0 {
				t.Fatalf("%s ∩ %s is not symmetric", names[i], names[j])
			}
		}
	}
	if nonEmpty == 0 || nonEmpty == len(ranges)*len(ranges) {
		t.Fatalf("%d of %d intersections non-empty: the cases do not exercise both outcomes", nonEmpty, len(ranges)*len(ranges))
	}
}
