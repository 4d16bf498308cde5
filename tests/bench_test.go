package tests

import (
	"fmt"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
)

// benchEntity is a typical entity of ~10 typed properties.
func benchEntity(pk, rk string) localtable.Entity {
	return localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: localtable.Properties{
		"Name":    localtable.StringValue("a customer name"),
		"Email":   localtable.StringValue("someone@example.com"),
		"Age":     localtable.Int32Value(42),
		"Balance": localtable.Int64Value(1234567890123),
		"Score":   localtable.DoubleValue(98.6),
		"Active":  localtable.BoolValue(true),
		"Joined":  localtable.DateTimeTicksValue(637000000000000000),
		"Id":      localtable.GUIDValue(localtable.MustParseGUID("4185404a-5818-48c3-b9be-f217df0dba6f")),
		"Blob":    localtable.BinaryValue(make([]byte, 64)),
		"Notes":   localtable.StringValue("some notes about this customer"),
	}}
}

func BenchmarkInsert(b *testing.B) {
	for _, eng := range tabletest.Engines {
		b.Run(eng.Name, func(b *testing.B) {
			_, tbl := tabletest.NewTable(b, eng)
			i := 0
			for b.Loop() {
				if _, err := tbl.Insert(ctx, benchEntity(fmt.Sprintf("p%03d", i%100), fmt.Sprintf("r%09d", i))); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkTransact inserts, per op, a transaction of 100 new entities of
// one partition (MaxTransactionActions).
func BenchmarkTransact(b *testing.B) {
	for _, eng := range tabletest.Engines {
		b.Run(eng.Name, func(b *testing.B) {
			_, tbl := tabletest.NewTable(b, eng)
			acts := make([]localtable.Action, localtable.MaxTransactionActions)
			i := 0
			for b.Loop() {
				pk := fmt.Sprintf("p%03d", (i/localtable.MaxTransactionActions)%100)
				for j := range acts {
					acts[j] = localtable.Action{Type: localtable.ActionInsert, Entity: benchEntity(pk, fmt.Sprintf("r%09d", i))}
					i++
				}
				if _, err := tbl.Transact(ctx, acts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGet(b *testing.B) {
	for _, eng := range tabletest.Engines {
		b.Run(eng.Name, func(b *testing.B) {
			_, tbl := tabletest.NewTable(b, eng)
			const n = 10000
			for i := 0; i < n; i++ {
				if _, err := tbl.Insert(ctx, benchEntity(fmt.Sprintf("p%03d", i%100), fmt.Sprintf("r%09d", i))); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			for b.Loop() {
				k := (i * 7919) % n
				if _, err := tbl.Get(ctx, fmt.Sprintf("p%03d", k%100), fmt.Sprintf("r%09d", k), nil); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func BenchmarkUpdateMerge(b *testing.B) {
	for _, eng := range tabletest.Engines {
		b.Run(eng.Name, func(b *testing.B) {
			_, tbl := tabletest.NewTable(b, eng)
			if _, err := tbl.Insert(ctx, benchEntity("p", "r")); err != nil {
				b.Fatal(err)
			}
			patch := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{"Age": localtable.Int32Value(1)}}
			for b.Loop() {
				if _, err := tbl.Update(ctx, patch, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
