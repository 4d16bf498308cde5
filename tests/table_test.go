package tests

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
)

var ctx = context.Background()

func TestInsertGetEveryType(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		e := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: tabletest.EveryTypeProps()}
		tag, err := tbl.Insert(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tbl.Get(ctx, "p", "r", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.ETag != tag {
			t.Errorf("ETag = %q, Insert returned %q", got.ETag, tag)
		}
		if diff := cmp.Diff(e.Properties, got.Properties, tabletest.ValueCmp); diff != "" {
			t.Errorf("properties (-want +got):\n%s", diff)
		}
		if got.Timestamp.IsZero() || got.Timestamp.Location() != time.UTC {
			t.Errorf("Timestamp = %v, want a UTC time", got.Timestamp)
		}
	})
}

func TestNullIsAbsent(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		e := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{"A": {}, "B": localtable.Int32Value(1)}}
		if _, err := tbl.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
		got, _ := tbl.Get(ctx, "p", "r", nil)
		if _, ok := got.Properties["A"]; ok || len(got.Properties) != 1 {
			t.Errorf("properties = %v, want only B", got.Properties)
		}
		// Merging a null leaves the stored property alone.
		e.Properties = localtable.Properties{"B": {}}
		if _, err := tbl.Update(ctx, e, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge}); err != nil {
			t.Fatal(err)
		}
		got, _ = tbl.Get(ctx, "p", "r", nil)
		if v := got.Properties["B"]; !v.Equal(localtable.Int32Value(1)) {
			t.Errorf("B after merging null = %v, want 1", v)
		}
	})
}

func TestInsertExisting(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		e := localtable.Entity{PartitionKey: "p", RowKey: "r"}
		if _, err := tbl.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
		_, err := tbl.Insert(ctx, e)
		if !errors.Is(err, localtable.ErrEntityExists) {
			t.Fatalf("second Insert: %v, want ErrEntityExists", err)
		}
		var le *localtable.Error
		if !errors.As(err, &le) || le.Code != "EntityAlreadyExists" {
			t.Errorf("error = %#v, want code EntityAlreadyExists", le)
		}
	})
}

func TestReplaceVsMerge(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		base := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{
			"A": localtable.Int32Value(1), "B": localtable.Int32Value(2)}}
		if _, err := tbl.Insert(ctx, base); err != nil {
			t.Fatal(err)
		}
		patch := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{
			"B": localtable.StringValue("two"), "C": localtable.Int32Value(3)}}
		if _, err := tbl.Update(ctx, patch, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge}); err != nil {
			t.Fatal(err)
		}
		got, _ := tbl.Get(ctx, "p", "r", nil)
		want := localtable.Properties{"A": localtable.Int32Value(1), "B": localtable.StringValue("two"), "C": localtable.Int32Value(3)}
		if diff := cmp.Diff(want, got.Properties, tabletest.ValueCmp); diff != "" {
			t.Errorf("after merge (-want +got):\n%s", diff)
		}
		if _, err := tbl.Update(ctx, patch, nil); err != nil {
			t.Fatal(err)
		}
		got, _ = tbl.Get(ctx, "p", "r", nil)
		if diff := cmp.Diff(patch.Properties, got.Properties, tabletest.ValueCmp); diff != "" {
			t.Errorf("after replace (-want +got):\n%s", diff)
		}
	})
}

func TestUpdateMissing(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		e := localtable.Entity{PartitionKey: "p", RowKey: "r"}
		for _, mode := range []localtable.UpdateMode{localtable.UpdateModeReplace, localtable.UpdateModeMerge} {
			_, err := tbl.Update(ctx, e, &localtable.UpdateOptions{Mode: mode, IfMatch: localtable.ETagAny})
			if !errors.Is(err, localtable.ErrEntityNotFound) || localtable.ErrorCodeOf(err) != "ResourceNotFound" {
				t.Errorf("Update mode %v of missing entity: %v, want ErrEntityNotFound/ResourceNotFound", mode, err)
			}
		}
		if _, err := tbl.Update(ctx, e, nil); !errors.Is(err, localtable.ErrEntityNotFound) {
			t.Errorf("Update(nil options) of missing entity: %v, want ErrEntityNotFound", err)
		}
		if err := tbl.Delete(ctx, "p", "r", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
			t.Errorf("Delete of missing entity: %v, want ErrEntityNotFound", err)
		}
		if _, err := tbl.Get(ctx, "p", "r", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
			t.Errorf("Get of missing entity: %v", err)
		}
	})
}

// TestUpdateModeUnknown: a mode other than replace or merge is refused,
// not taken for replace, and writes nothing.
func TestUpdateModeUnknown(t *testing.T) {
	_, tbl := tabletest.NewTable(t, tabletest.Engines[0])
	e := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{"A": localtable.Int32Value(1)}}
	if _, err := tbl.Insert(ctx, e); err != nil {
		t.Fatal(err)
	}
	bad := localtable.UpdateMode(2)
	e.Properties = localtable.Properties{"B": localtable.Int32Value(2)}
	if _, err := tbl.Update(ctx, e, &localtable.UpdateOptions{Mode: bad}); !errors.Is(err, localtable.ErrInvalidInput) {
		t.Errorf("Update with mode %v: %v, want ErrInvalidInput", bad, err)
	}
	if _, err := tbl.Upsert(ctx, e, &localtable.UpsertOptions{Mode: bad}); !errors.Is(err, localtable.ErrInvalidInput) {
		t.Errorf("Upsert with mode %v: %v, want ErrInvalidInput", bad, err)
	}
	got, err := tbl.Get(ctx, "p", "r", nil)
	if err != nil || len(got.Properties) != 1 || got.Properties["A"].Kind() != localtable.KindInt32 {
		t.Errorf("after refused writes: %v %v, want only A", got.Properties, err)
	}
}

func TestUpsert(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		e := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{"A": localtable.Int32Value(1)}}
		t1, err := tbl.Upsert(ctx, e, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge}) // creates
		if err != nil {
			t.Fatal(err)
		}
		e.Properties = localtable.Properties{"B": localtable.Int32Value(2)}
		t2, err := tbl.Upsert(ctx, e, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge}) // merges
		if err != nil {
			t.Fatal(err)
		}
		got, _ := tbl.Get(ctx, "p", "r", nil)
		if len(got.Properties) != 2 {
			t.Errorf("after upsert-merge: %v, want A and B", got.Properties)
		}
		t3, err := tbl.Upsert(ctx, e, nil) // replaces
		if err != nil {
			t.Fatal(err)
		}
		got, _ = tbl.Get(ctx, "p", "r", nil)
		if len(got.Properties) != 1 || got.ETag != t3 {
			t.Errorf("after upsert-replace: %v %q, want only B and ETag %q", got.Properties, got.ETag, t3)
		}
		if t1 == t2 || t2 == t3 || t1 == t3 {
			t.Errorf("ETags not unique per write: %q %q %q", t1, t2, t3)
		}
	})
}

func TestETagConditions(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		e := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{"V": localtable.Int32Value(1)}}
		old, err := tbl.Insert(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := tbl.Update(ctx, e, &localtable.UpdateOptions{IfMatch: old})
		if err != nil {
			t.Fatalf("Update with current ETag: %v", err)
		}
		if cur == old {
			t.Fatalf("ETag did not change on write: %q", cur)
		}
		// A stale ETag fails, for update and delete, and changes nothing.
		_, err = tbl.Update(ctx, e, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: old})
		if !errors.Is(err, localtable.ErrConditionNotMet) || localtable.ErrorCodeOf(err) != "UpdateConditionNotSatisfied" {
			t.Errorf("Update with stale ETag: %v", err)
		}
		if err := tbl.Delete(ctx, "p", "r", &localtable.DeleteOptions{IfMatch: old}); !errors.Is(err, localtable.ErrConditionNotMet) {
			t.Errorf("Delete with stale ETag: %v", err)
		}
		got, _ := tbl.Get(ctx, "p", "r", nil)
		if got.ETag != cur {
			t.Errorf("ETag after failed writes = %q, want %q", got.ETag, cur)
		}
		// An If-Match that is not a weak ETag is InvalidInput.
		for _, bad := range []localtable.ETag{"bogus", `"strong"`, `W/"a", W/"b"`, `W/"a"b"`, `W/x`, `W/"`, "**"} {
			if _, err := tbl.Update(ctx, e, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: bad}); localtable.ErrorCodeOf(err) != "InvalidInput" {
				t.Errorf("Update with If-Match %s: %v, want InvalidInput", bad, err)
			}
			if err := tbl.Delete(ctx, "p", "r", &localtable.DeleteOptions{IfMatch: bad}); localtable.ErrorCodeOf(err) != "InvalidInput" {
				t.Errorf("Delete with If-Match %s: %v, want InvalidInput", bad, err)
			}
		}
		// A weak ETag of another form is a valid condition that never holds.
		for _, weak := range []localtable.ETag{`W/"wrong"`, `w/"wrong"`, `W/""`, `W/"a\"b"`, localtable.ETag(strings.Replace(string(cur), "Z'", "1Z'", 1))} {
			if _, err := tbl.Update(ctx, e, &localtable.UpdateOptions{IfMatch: weak}); !errors.Is(err, localtable.ErrConditionNotMet) {
				t.Errorf("Update with If-Match %s: %v, want ErrConditionNotMet", weak, err)
			}
			if err := tbl.Delete(ctx, "p", "r", &localtable.DeleteOptions{IfMatch: weak}); !errors.Is(err, localtable.ErrConditionNotMet) {
				t.Errorf("Delete with If-Match %s: %v, want ErrConditionNotMet", weak, err)
			}
			if _, err := tbl.Update(ctx, localtable.Entity{PartitionKey: "p", RowKey: "none"}, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: weak}); !errors.Is(err, localtable.ErrEntityNotFound) {
				t.Errorf("Update of a missing entity with If-Match %s: %v, want ErrEntityNotFound", weak, err)
			}
		}
		if err := tbl.Delete(ctx, "p", "r", &localtable.DeleteOptions{IfMatch: cur}); err != nil {
			t.Errorf("Delete with current ETag: %v", err)
		}
		if _, err := tbl.Get(ctx, "p", "r", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
			t.Errorf("Get after delete: %v", err)
		}
	})
}

func TestGetSelect(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		e := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: tabletest.EveryTypeProps()}
		if _, err := tbl.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
		got, err := tbl.Get(ctx, "p", "r", &localtable.GetOptions{Select: []string{"I64", "Missing"}})
		if err != nil {
			t.Fatal(err)
		}
		want := localtable.Properties{"I64": localtable.Int64Value(math.MaxInt64)}
		if diff := cmp.Diff(want, got.Properties, tabletest.ValueCmp); diff != "" {
			t.Errorf("projection (-want +got):\n%s", diff)
		}
		if got.PartitionKey != "p" || got.RowKey != "r" || got.ETag == "" || got.Timestamp.IsZero() {
			t.Errorf("projection lost system properties: %+v", got)
		}
	})
}

func TestEntityOnMissingTable(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a := tabletest.OpenAccount(t, eng, nil)
		tbl := a.Table("nosuch")
		_, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"})
		if !errors.Is(err, localtable.ErrTableNotFound) || localtable.ErrorCodeOf(err) != "TableNotFound" {
			t.Errorf("Insert into missing table: %v", err)
		}
		if _, err := tbl.Get(ctx, "p", "r", nil); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("Get from missing table: %v", err)
		}
	})
}

func TestEmptyKeysAndOddCharacters(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		keys := [][2]string{{"", ""}, {"", "a"}, {"a", ""}, {"it's", "x y"}, {"𝄞", "\uffff"}, {"é", "%2F"}}
		for _, k := range keys {
			if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: k[0], RowKey: k[1]}); err != nil {
				t.Fatalf("Insert %q: %v", k, err)
			}
		}
		for _, k := range keys {
			got, err := tbl.Get(ctx, k[0], k[1], nil)
			if err != nil || got.PartitionKey != k[0] || got.RowKey != k[1] {
				t.Errorf("Get %q = %q %q, %v", k, got.PartitionKey, got.RowKey, err)
			}
		}
	})
}

func TestTimestampAndETagFromClock(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		start := time.Date(2021, 9, 8, 18, 58, 54, 789938800, time.UTC)
		clk := tabletest.NewFakeClock(start)
		a := tabletest.OpenAccount(t, eng, &localtable.Options{Clock: clk.Now})
		tbl, _ := a.CreateTable(ctx, "tbl1")
		tag, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "1"})
		if err != nil {
			t.Fatal(err)
		}
		if want := localtable.ETag(`W/"datetime'2021-09-08T18%3A58%3A54.7899388Z'"`); tag != want {
			t.Errorf("ETag = %s, want %s", tag, want)
		}
		got, _ := tbl.Get(ctx, "p", "1", nil)
		if !got.Timestamp.Equal(start) {
			t.Errorf("Timestamp = %v, want %v", got.Timestamp, start)
		}
		// A stalled clock still gives strictly increasing Timestamps, 100 ns
		// apart; a clock stepping back too.
		var prev = got.Timestamp
		for i, step := range []time.Duration{0, 0, -time.Hour, 0} {
			clk.Set(clk.Now().Add(step))
			tag2, err := tbl.Upsert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "1"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := tbl.Get(ctx, "p", "1", nil)
			if !got.Timestamp.After(prev) || got.Timestamp.Sub(prev) != 100*time.Nanosecond {
				t.Errorf("step %d: Timestamp %v does not follow %v by 100ns", i, got.Timestamp, prev)
			}
			if tag2 == tag {
				t.Errorf("step %d: ETag repeated", i)
			}
			prev, tag = got.Timestamp, tag2
		}
		// A client-sent Timestamp is ignored.
		clk.Set(start.Add(time.Hour))
		_, err = tbl.Upsert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "2", Timestamp: time.Unix(0, 0)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _ = tbl.Get(ctx, "p", "2", nil)
		if !got.Timestamp.Equal(start.Add(time.Hour)) {
			t.Errorf("Timestamp = %v, want the clock's %v", got.Timestamp, start.Add(time.Hour))
		}
	})
}

func TestClosedAccount(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Insert(ctx, localtable.Entity{}); !errors.Is(err, localtable.ErrClosed) {
			t.Errorf("Insert after Close: %v", err)
		}
		if _, err := a.CreateTable(ctx, "tbl2"); !errors.Is(err, localtable.ErrClosed) {
			t.Errorf("CreateTable after Close: %v", err)
		}
		if err := a.Close(); !errors.Is(err, localtable.ErrClosed) {
			t.Errorf("second Close: %v", err)
		}
	})
}

func TestCanceledContext(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		c, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := tbl.Insert(c, localtable.Entity{}); !errors.Is(err, context.Canceled) {
			t.Errorf("Insert with canceled context: %v", err)
		}
		if _, err := tbl.Get(ctx, "", "", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
			t.Errorf("canceled Insert wrote something: %v", err)
		}
	})
}
