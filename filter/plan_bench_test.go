package filter_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/localtable/localtable/filter"
)

// orOfPoints is "(PartitionKey eq 'p0' and RowKey eq 'r0') or …" with n
// point lookups.
func orOfPoints(n int) string {
	terms := make([]string, n)
	for i := range terms {
		terms[i] = fmt.Sprintf("(PartitionKey eq 'p%05d' and RowKey eq 'r%05d')", (i*7919)%n, i)
	}
	return strings.Join(terms, " or ")
}

// orOf is "(Prop eq 'prefix0' or Prop eq 'prefix1' or …)" with the values
// from first to first+n-1.
func orOf(prop, prefix string, first, n int) string {
	terms := make([]string, n)
	for i := range terms {
		terms[i] = fmt.Sprintf("%s eq '%s%05d'", prop, prefix, first+i)
	}
	return "(" + strings.Join(terms, " or ") + ")"
}

func benchPlan(b *testing.B, s string) {
	f, err := filter.ParseWithOptions(s, nil)
	if err != nil {
		b.Fatal(err)
	}
	var n int
	for b.Loop() {
		rs, _ := filter.New(f.Expr()).KeyRanges()
		n = len(rs)
	}
	b.ReportMetric(float64(n), "ranges")
}

// BenchmarkPlanOr plans or-ed point lookups, the shape of a batch of gets,
// and ands of two big ors: one intersecting two sets of partitions, one
// crossing partitions with RowKeys.
func BenchmarkPlanOr(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("points=%d", n), func(b *testing.B) { benchPlan(b, orOfPoints(n)) })
	}
	for _, n := range []int{10, 100, 1000, 10000} {
		s := orOf("PartitionKey", "p", 0, n) + " and " + orOf("PartitionKey", "p", n/2, n)
		b.Run(fmt.Sprintf("andOfOrs=%d", n), func(b *testing.B) { benchPlan(b, s) })
	}
	for _, n := range []int{10, 100, 1000} {
		s := orOf("PartitionKey", "p", 0, n) + " and " + orOf("RowKey", "r", 0, n)
		b.Run(fmt.Sprintf("pkTimesRk=%d", n), func(b *testing.B) { benchPlan(b, s) })
	}
}

// BenchmarkPropertyRangesOr finds an index's value ranges in or-ed
// equalities of a property, at sizes 10× apart: the time per op should
// grow about tenfold from one to the next (it grew a hundredfold when each
// level of the or chain copied the ranges below it).
func BenchmarkPropertyRangesOr(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		terms := make([]*filter.Filter, n) // the builder's: Parse allows 15 comparisons
		for i := range terms {
			terms[i] = filter.Prop("Name").Eq(fmt.Sprintf("v%05d", i))
		}
		f := filter.Or(terms...)
		b.Run(fmt.Sprintf("terms=%d", n), func(b *testing.B) {
			for b.Loop() {
				if rs, ok := f.PropertyRanges("Name"); !ok || len(rs) != n {
					b.Fatalf("%d ranges, %v", len(rs), ok)
				}
			}
		})
	}
}
