package tabletest

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

// EveryTypeProps returns properties of every Edm type.
func EveryTypeProps() localtable.Properties {
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

// ValueCmp compares Values with Value.Equal.
var ValueCmp = cmp.Comparer(func(a, b localtable.Value) bool { return a.Equal(b) })

// Ent returns the entity pk/rk with the properties Props(kv...).
func Ent(pk, rk string, kv ...any) localtable.Entity {
	return localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: Props(kv...)}
}

// Props returns properties from alternating names and Go values, each
// value converted by localtable.AnyValue; it panics on a value AnyValue
// refuses.
func Props(kv ...any) localtable.Properties {
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

// KeyPred is a test Predicate: the entities in Ranges (all of them when
// Ranges is nil) that Accept accepts (all of them when Accept is nil).
type KeyPred struct {
	Ranges []localtable.KeyRange
	Accept func(e *localtable.Entity) bool
}

// Match reports whether e is in p's ranges and accepted.
func (p KeyPred) Match(e *localtable.Entity) bool {
	if p.Ranges != nil && !slices.ContainsFunc(p.Ranges, func(r localtable.KeyRange) bool { return r.Contains(e.PartitionKey, e.RowKey) }) {
		return false
	}
	return p.Accept == nil || p.Accept(e)
}

// KeyRanges returns p's Ranges, and whether it has any (not nil).
func (p KeyPred) KeyRanges() ([]localtable.KeyRange, bool) { return p.Ranges, p.Ranges != nil }

// String describes the predicate.
func (p KeyPred) String() string { return "test predicate" }

// Fill inserts parts partitions "p000"… of rows rows "r0000"… each into
// tbl, in transactions of up to 100 entities; row r of partition p has N
// = p*rows+r and Even = r%2 == 0.
func Fill(t testing.TB, tbl *localtable.Table, parts, rows int) {
	t.Helper()
	ctx := context.Background()
	for p := 0; p < parts; p++ {
		acts := []localtable.Action{}
		for r := 0; r < rows; r++ {
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: Ent(fmt.Sprintf("p%03d", p), fmt.Sprintf("r%04d", r), "N", p*rows+r, "Even", r%2 == 0)})
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

// KeysOf returns the "PartitionKey/RowKey" of each entity of es.
func KeysOf(es []localtable.Entity) []string {
	var ks []string
	for _, e := range es {
		ks = append(ks, e.PartitionKey+"/"+e.RowKey)
	}
	return ks
}

// CollectKeys returns the "PartitionKey/RowKey" of each entity seq yields,
// failing the test at the first error.
func CollectKeys(t *testing.T, seq func(func(localtable.Entity, error) bool)) []string {
	t.Helper()
	var ks []string
	for e, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, e.PartitionKey+"/"+e.RowKey)
	}
	return ks
}
