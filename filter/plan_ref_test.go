package filter

import (
	"slices"
	"unicode/utf8"

	"github.com/localtable/localtable"
)

// This file keeps the planner as it was before planning became
// O(n log n): binary and/or nodes combined pairwise, unions by sorting the
// concatenation, narrowing every span against every RowKey span. It is
// slow but simple, and the reference that the planner must agree with
// range for range.

func refUnion(a, b spans) spans {
	all := append(slices.Clip(a), b...)
	slices.SortFunc(all, func(x, y span) int { return cmpPoint(x.lo, y.lo) })
	var out spans
	for _, s := range all {
		if n := len(out); n > 0 && cmpPoint(s.lo, out[n-1].hi) <= 0 {
			if cmpPoint(s.hi, out[n-1].hi) > 0 {
				out[n-1].hi = s.hi
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

func refAnalyze(x Expr) plan {
	switch x := x.(type) {
	case *Comparison:
		isPK := x.Property == localtable.PartitionKeyName
		isRK := x.Property == localtable.RowKeyName
		if !isPK && !isRK {
			return plan{full, full}
		}
		if x.Value.Kind() != localtable.KindString {
			return plan{}
		}
		s := x.Value.String()
		if !utf8.ValidString(s) {
			return plan{full, full}
		}
		if isPK {
			return plan{bounds(x.Op, s, false), full}
		}
		return plan{full, bounds(x.Op, s, true)}
	case *Constant:
		if x.Value {
			return plan{full, full}
		}
		return plan{}
	case *NotExpr:
		switch y := x.X.(type) {
		case *Constant:
			return refAnalyze(&Constant{!y.Value})
		case *NotExpr:
			return refAnalyze(y.X)
		}
	case *AndExpr:
		l, r := refAnalyze(x.Left), refAnalyze(x.Right)
		return plan{intersect(l.keys, r.keys), intersect(l.rows, r.rows)}
	case *OrExpr:
		l, r := refAnalyze(x.Left), refAnalyze(x.Right)
		return plan{refUnion(refNarrow(l), refNarrow(r)), refUnion(l.rows, r.rows)}
	}
	return plan{full, full}
}

func refNarrow(p plan) spans {
	if isFull(p.rows) {
		return p.keys
	}
	var out spans
	for _, s := range p.keys {
		part := s.lo.pk
		end := point{pk: part + "\x00"}
		if s.hi.inf || (s.hi.pk != part && s.hi != end) {
			out = append(out, s)
			continue
		}
		var in spans
		for _, r := range p.rows {
			hi := end
			if !r.hi.inf {
				hi = point{pk: part, rk: r.hi.rk}
			}
			in = append(in, span{point{pk: part, rk: r.lo.rk}, hi})
		}
		out = append(out, intersect(spans{s}, in)...)
	}
	return out
}

// refKeyRanges is KeyRanges by the reference planner.
func refKeyRanges(f *Filter) ([]localtable.KeyRange, bool) {
	s := refNarrow(refAnalyze(f.root))
	if isFull(s) {
		return nil, false
	}
	out := make([]localtable.KeyRange, len(s))
	for i, r := range s {
		out[i] = localtable.KeyRange{Start: toKey(r.lo), End: toKey(r.hi)}
	}
	return out, true
}
