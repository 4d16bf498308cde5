package localtable_test

// The helpers of the table-level suites that both the root's tests and
// package tests (../tests) use. Package tests has its own copies, in the
// files they come from (ctx, everyTypeProps and valueCmp in
// table_test.go, ent in transaction_test.go, props in validate_test.go,
// keyPred, fill and keysOf in query_test.go): a test package cannot
// import another's test files.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/localtable/localtable"
)

var ctx = context.Background()

// everyTypeProps returns properties of every Edm type.
func everyTypeProps() localtable.Properties {
	return localtable.Properties{
		"S":   localtable.StringValue("héllo 𝄞"),
		"I32": localtable.Int32Value(-42),
		"I64": localtable.Int64Value(math.MaxInt64),
		"D":   localtable.DoubleValue(1.5),
		"NaN": localtable.DoubleValue(math.NaN()),
		"Inf": localtable.DoubleValue(math.Inf(-1)),
		"B":   localtable.BoolValue(true),
		"F":   localtable.BoolValue(false),
		"T":   localtable.DateTimeValue(time.Date(2024, 2, 29, 12, 0, 0, 123456700, time.UTC)),
		"G":   localtable.GUIDValue(localtable.MustParseGUID("4185404a-5818-48c3-b9be-f217df0dba6f")),
		"Bin": localtable.BinaryValue([]byte{0, 1, 2, 0xff}),
		"E":   localtable.StringValue(""),
	}
}

// valueCmp compares Values with Value.Equal.
var valueCmp = cmp.Comparer(func(a, b localtable.Value) bool { return a.Equal(b) })

func ent(pk, rk string, kv ...any) localtable.Entity {
	return localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: props(kv...)}
}

func props(kv ...any) localtable.Properties {
	p := localtable.Properties{}
	for i := 0; i < len(kv); i += 2 {
		v, err := localtable.AnyValue(kv[i+1])
		if err != nil {
			panic(err)
		}
		p[kv[i].(string)] = v
	}
	return p
}

// keyPred is a test Predicate: entities in ranges (and, when match is set,
// accepted by it).
type keyPred struct {
	ranges []localtable.KeyRange
	match  func(e *localtable.Entity) bool
}

func (p keyPred) Match(e *localtable.Entity) bool {
	if p.ranges != nil && !slices.ContainsFunc(p.ranges, func(r localtable.KeyRange) bool { return r.Contains(e.PartitionKey, e.RowKey) }) {
		return false
	}
	return p.match == nil || p.match(e)
}
func (p keyPred) KeyRanges() ([]localtable.KeyRange, bool) { return p.ranges, p.ranges != nil }
func (p keyPred) String() string                           { return "test predicate" }

func fill(t testing.TB, tbl *localtable.Table, parts, rows int) {
	t.Helper()
	for p := 0; p < parts; p++ {
		acts := []localtable.Action{}
		for r := 0; r < rows; r++ {
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: ent(fmt.Sprintf("p%03d", p), fmt.Sprintf("r%04d", r), "N", p*rows+r, "Even", r%2 == 0)})
			if len(acts) == 100 {
				if _, err := tbl.Transact(ctx, acts); err != nil {
					t.Fatal(err)
				}
				acts = acts[:0]
			}
		}
		if len(acts) > 0 {
			if _, err := tbl.Transact(ctx, acts); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func keysOf(es []localtable.Entity) []string {
	var ks []string
	for _, e := range es {
		ks = append(ks, e.PartitionKey+"/"+e.RowKey)
	}
	return ks
}
