package localtable_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage"
)

func TestPersistTablesEntitiesPolicies(t *testing.T) {
	r := tabletest.NewReopener(t)
	a := r.Open(nil)
	names := []string{"MixedCase", "lower", "UPPER9"}
	for _, n := range names {
		if _, err := a.CreateTable(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	tbl := a.Table("MixedCase")
	want := map[string]localtable.Entity{}
	for _, rk := range []string{"a", "b", "", "with space ~é", "𝄞"} {
		e := localtable.Entity{PartitionKey: "p", RowKey: rk, Properties: tabletest.EveryTypeProps()}
		e.Properties["Row"] = localtable.StringValue(rk)
		tag, err := tbl.Insert(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		e.ETag = tag
		want[rk] = e
	}
	// An entity updated after its insert keeps its last ETag.
	upd := want["a"]
	upd.Properties = localtable.Properties{"Only": localtable.Int32Value(7)}
	tag, err := tbl.Update(ctx, upd, &localtable.UpdateOptions{IfMatch: want["a"].ETag})
	if err != nil {
		t.Fatal(err)
	}
	upd.ETag = tag
	want["a"] = upd
	policies := []localtable.AccessPolicy{
		{ID: "read", Permission: "r", Start: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)},
		{ID: "all", Permission: "raud", Expiry: time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	if err := tbl.SetAccessPolicy(ctx, policies); err != nil {
		t.Fatal(err)
	}
	stamps := map[string]time.Time{}
	for rk := range want {
		e, err := tbl.Get(ctx, "p", rk, nil)
		if err != nil {
			t.Fatal(err)
		}
		stamps[rk] = e.Timestamp
	}

	for round := range 2 { // reopen twice: a reopen must not change anything
		a = r.Open(nil)
		page, err := a.ListTables(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ti := range page.Tables {
			got = append(got, ti.Name)
		}
		if diff := cmp.Diff([]string{"lower", "MixedCase", "UPPER9"}, got); diff != "" {
			t.Errorf("round %d: tables (-want +got):\n%s", round, diff)
		}
		tt, err := a.GetTable(ctx, "mixedcase")
		if err != nil || tt.Name() != "MixedCase" {
			t.Errorf("round %d: GetTable(mixedcase) = %v, %v; want the name as created", round, tt, err)
		}
		tbl = a.Table("mixedcase")
		for rk, w := range want {
			e, err := tbl.Get(ctx, "p", rk, nil)
			if err != nil {
				t.Fatalf("round %d: Get(%q): %v", round, rk, err)
			}
			if e.ETag != w.ETag || !e.Timestamp.Equal(stamps[rk]) {
				t.Errorf("round %d: %q has ETag %s, Timestamp %v; want %s, %v", round, rk, e.ETag, e.Timestamp, w.ETag, stamps[rk])
			}
			if diff := cmp.Diff(w.Properties, e.Properties, tabletest.ValueCmp); diff != "" {
				t.Errorf("round %d: %q properties (-want +got):\n%s", round, rk, diff)
			}
		}
		n := 0
		for _, err := range tbl.QueryAll(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != len(want) {
			t.Errorf("round %d: query returned %d entities, want %d", round, n, len(want))
		}
		gotP, err := tbl.GetAccessPolicy(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(policies, gotP); diff != "" {
			t.Errorf("round %d: access policies (-want +got):\n%s", round, diff)
		}
		// The ETag from before the reopen still works as a condition.
		if round == 1 {
			w := want["b"]
			if _, err := tbl.Update(ctx, w, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: w.ETag}); err != nil {
				t.Errorf("Update with the ETag from before the reopen: %v", err)
			}
		}
	}
}

func TestPersistTimestampsIncreaseWithClockBehind(t *testing.T) {
	r := tabletest.NewReopener(t)
	clk := tabletest.NewFakeClock(time.Date(2040, 6, 1, 0, 0, 0, 0, time.UTC))
	a := r.Open(clk.Now)
	if _, err := a.CreateTable(ctx, "clock"); err != nil {
		t.Fatal(err)
	}
	var last time.Time
	tags := map[localtable.ETag]bool{}
	write := func(a *localtable.Account, rk string) {
		t.Helper()
		tag, err := a.Table("clock").Upsert(ctx, localtable.Entity{PartitionKey: "p", RowKey: rk}, nil)
		if err != nil {
			t.Fatal(err)
		}
		e, err := a.Table("clock").Get(ctx, "p", rk, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !e.Timestamp.After(last) || tags[tag] {
			t.Fatalf("write %s: Timestamp %v (ETag %s) after %v", rk, e.Timestamp, tag, last)
		}
		last, tags[tag] = e.Timestamp, true
	}
	for i := range 5 {
		write(a, string(rune('a'+i)))
	}
	// Reopen with the clock 40 years behind, then with a stalled clock, then
	// stepping back on each reopen.
	clk.Set(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	for round := range 4 {
		a = r.Open(clk.Now)
		for i := range 3 {
			write(a, string(rune('a'+i)))
		}
		clk.Set(clk.Now().Add(-time.Hour))
		if last.Year() < 2040 {
			t.Fatalf("round %d: Timestamp %v went back to the clock", round, last)
		}
	}
}

func TestPersistDeleteTable(t *testing.T) {
	r := tabletest.NewReopener(t)
	a := r.Open(nil)
	for _, n := range []string{"Gone", "Kept"} {
		tbl, err := a.CreateTable(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, rk := range []string{"1", "2", "3"} {
			if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: rk}); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := tablePrefixes(t, localtable.EngineOf(a)) // Gone's, then Kept's
	if len(before) != 2 {
		t.Fatalf("entity key prefixes %x, want 2", before)
	}
	if err := a.DeleteTable(ctx, "gone"); err != nil {
		t.Fatal(err)
	}

	a = r.Open(nil)
	if _, err := a.GetTable(ctx, "Gone"); !errors.Is(err, localtable.ErrTableNotFound) {
		t.Fatalf("GetTable(Gone) after reopen: %v, want ErrTableNotFound", err)
	}
	if n := countEntities(t, a.Table("Kept")); n != 3 {
		t.Fatalf("Kept has %d entities after reopen, want 3", n)
	}
	// Re-create the table under another case: it must start empty, with a
	// new ID (the old one's entities were range-deleted, and IDs are not
	// reused even after a reopen).
	tbl, err := a.CreateTable(ctx, "GONE")
	if err != nil {
		t.Fatal(err)
	}
	if n := countEntities(t, tbl); n != 0 {
		t.Fatalf("re-created table has %d entities, want 0", n)
	}
	if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "new"}); err != nil {
		t.Fatal(err)
	}
	mid := tablePrefixes(t, localtable.EngineOf(a))
	if len(mid) != 2 || !bytes.Equal(mid[0], before[1]) || bytes.Compare(mid[1], before[1]) <= 0 {
		t.Fatalf("prefixes after re-create %x; before delete %x: want Kept's and a new, higher one", mid, before)
	}

	// Delete and re-create again after a reopen: the next ID must not
	// collide with the table deleted last (the catalog no longer holds it).
	if err := a.DeleteTable(ctx, "GONE"); err != nil {
		t.Fatal(err)
	}
	a = r.Open(nil)
	tbl, err = a.CreateTable(ctx, "gone")
	if err != nil {
		t.Fatal(err)
	}
	if n := countEntities(t, tbl); n != 0 {
		t.Fatalf("table re-created after reopen has %d entities, want 0", n)
	}
	if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "newer"}); err != nil {
		t.Fatal(err)
	}
	last := tablePrefixes(t, localtable.EngineOf(a))
	if len(last) != 2 || !bytes.Equal(last[0], before[1]) || bytes.Compare(last[1], mid[1]) <= 0 {
		t.Fatalf("prefixes after reopen and re-create %x; before %x: want Kept's and a new, higher one", last, mid)
	}
	if _, err := tbl.Get(ctx, "p", "new", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
		t.Fatalf("entity of the deleted table visible: %v", err)
	}
	a = r.Open(nil)
	if n := countEntities(t, a.Table("gone")); n != 1 {
		t.Fatalf("after another reopen: %d entities, want 1", n)
	}
	if n := countEntities(t, a.Table("Kept")); n != 3 {
		t.Fatalf("Kept has %d entities, want 3", n)
	}
	page, err := a.ListTables(ctx, nil)
	if err != nil || len(page.Tables) != 2 || page.Tables[0].Name != "gone" || page.Tables[1].Name != "Kept" {
		t.Fatalf("ListTables = %+v, %v", page, err)
	}
}

func countEntities(t *testing.T, tbl *localtable.Table) int {
	t.Helper()
	n := 0
	for _, err := range tbl.QueryAll(ctx, nil) {
		if err != nil {
			t.Fatalf("QueryAll(%s): %v", tbl.Name(), err)
		}
		n++
	}
	return n
}

// tablePrefixes returns the distinct table prefixes ('e' + ID) of the
// entity keys in eng, in order.
func tablePrefixes(t *testing.T, eng storage.Engine) [][]byte {
	t.Helper()
	it, err := eng.NewIter(&storage.IterOptions{LowerBound: []byte("e"), UpperBound: []byte("f")})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out [][]byte
	for ok := it.First(); ok; ok = it.Next() {
		p := it.Key()[:9]
		if len(out) == 0 || !bytes.Equal(out[len(out)-1], p) {
			out = append(out, bytes.Clone(p))
		}
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out
}
