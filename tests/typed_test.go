package tests

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
)

type reading struct {
	PartitionKey string
	RowKey       string
	Timestamp    time.Time
	ETag         localtable.ETag
	Celsius      float64
	Sensor       string `table:"SensorName"`
	Note         *string
}

// TestQueryAs: typed iteration yields each entity unmarshalled, honours
// the filter, Select and Limit, and stops at the first error.
func TestQueryAs(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		note := "calibrated"
		want := []reading{
			{PartitionKey: "kitchen", RowKey: "001", Celsius: 21.5, Sensor: "k1", Note: &note},
			{PartitionKey: "kitchen", RowKey: "002", Celsius: 22, Sensor: "k1"},
			{PartitionKey: "porch", RowKey: "001", Celsius: -3.25, Sensor: "p7"},
		}
		for i := range want {
			e, err := localtable.Marshal(want[i])
			if err != nil {
				t.Fatal(err)
			}
			tag, err := tbl.Insert(ctx, e)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tbl.Get(ctx, e.PartitionKey, e.RowKey, nil)
			if err != nil {
				t.Fatal(err)
			}
			want[i].ETag, want[i].Timestamp = tag, got.Timestamp
		}

		var got []reading
		for r, err := range localtable.QueryAs[reading](ctx, tbl, nil) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, r)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("QueryAs (-want +got):\n%s", diff)
		}

		// Filter, Select and Limit pass through: the unselected field
		// stays zero.
		got = nil
		f := tabletest.KeyPred{Ranges: []localtable.KeyRange{{Start: localtable.PartitionStart("kitchen"), End: localtable.PartitionEnd("kitchen")}}}
		for r, err := range localtable.QueryAs[reading](ctx, tbl, &localtable.QueryOptions{Filter: f, Select: []string{"Celsius"}, Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, r)
		}
		w := want[0]
		w.Sensor, w.Note = "", nil
		if diff := cmp.Diff([]reading{w}, got); diff != "" {
			t.Errorf("QueryAs with Filter, Select, Limit (-want +got):\n%s", diff)
		}

		// An entity that does not fit T ends the iteration with the error
		// and a zero T, after the entities before it.
		if _, err := tbl.Insert(ctx, tabletest.Ent("kitchen", "003", "Celsius", "warm")); err != nil {
			t.Fatal(err)
		}
		var n int
		var last error
		for r, err := range localtable.QueryAs[reading](ctx, tbl, nil) {
			n++
			if err != nil {
				if r != (reading{}) {
					t.Errorf("value with the error = %+v, want zero", r)
				}
				last = err
			}
		}
		if n != 3 || last == nil {
			t.Errorf("QueryAs over a mistyped entity: %d yields, last error %v; want 3, an error", n, last)
		}

		// A T that cannot be mapped fails on the first entity.
		for _, err := range localtable.QueryAs[int](ctx, tbl, nil) {
			if !errors.Is(err, localtable.ErrUnsupportedType) {
				t.Errorf("QueryAs[int]: %v, want ErrUnsupportedType", err)
			}
		}
		// Query errors are yielded as they are.
		for _, err := range localtable.QueryAs[reading](ctx, a.Table("missing"), nil) {
			if !errors.Is(err, localtable.ErrTableNotFound) {
				t.Errorf("QueryAs of a missing table: %v", err)
			}
		}
		// Breaking out of the loop is fine.
		for range localtable.QueryAs[reading](ctx, tbl, nil) {
			break
		}
	})
}
