package tests

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/internal/tabletest"
)

// Secondary indexes: declared, listed and dropped per table, persisted,
// kept by every write (checked by Verify, which compares each index with
// its table), and used by queries (tests/query_diff_test.go compares their
// answers with the scan's).

func mustVerify(t *testing.T, a *localtable.Account) {
	t.Helper()
	rep, err := a.Verify(context.Background())
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !rep.OK() {
		t.Fatalf("Verify found problems: %v %+v", rep.Problems, rep.Tables)
	}
}

// TestIndexNamesCaseInsensitive: index names are one name in any case, as
// table names are, displayed as declared; a second index on the same
// properties under another name is refused, naming the first.
func TestIndexNamesCaseInsensitive(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		tabletest.Must(t, tbl.CreateIndex(ctx, "ByScore", "Score"))
		if err := tbl.CreateIndex(ctx, "byscore", "Total"); !errors.Is(err, localtable.ErrIndexExists) {
			t.Errorf("CreateIndex(byscore, Total) beside ByScore: %v; want ErrIndexExists", err)
		}
		if err := tbl.CreateIndex(ctx, "BYSCORE", "Score"); err != nil {
			t.Errorf("CreateIndex(BYSCORE, Score), ByScore declared: %v; want nil (the same index)", err)
		}
		err := tbl.CreateIndex(ctx, "Scores", "Score")
		var de *localtable.DuplicateIndexError
		if !errors.As(err, &de) || de.Existing != "ByScore" || !errors.Is(err, localtable.ErrIndexExists) {
			t.Errorf("CreateIndex(Scores, Score) beside ByScore: %v; want a DuplicateIndexError naming ByScore", err)
		}
		if got, err := tbl.Indexes(ctx); err != nil || len(got) != 1 || got[0].Name != "ByScore" {
			t.Fatalf("Indexes = %v, %v; want ByScore alone, as declared", got, err)
		}
		tabletest.Must(t, tbl.RebuildIndex(ctx, "bySCORE"))
		tabletest.Must(t, tbl.DropIndex(ctx, "byscore"))
		if got, err := tbl.Indexes(ctx); err != nil || len(got) != 0 {
			t.Fatalf("after DropIndex(byscore), Indexes = %v, %v; want none", got, err)
		}
		mustVerify(t, a)
	})
}

func TestIndexDeclareListDrop(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		if got, err := tbl.Indexes(ctx); err != nil || len(got) != 0 {
			t.Fatalf("Indexes of a new table = %v, %v; want none", got, err)
		}
		tabletest.Must(t, tbl.CreateIndex(ctx, "byTotal", "Total"))
		tabletest.Must(t, tbl.CreateIndex(ctx, "byCity", "City", "Total"))
		// Covering by default on the memory engine alone.
		covering := eng.Name == "memory"
		want := []localtable.IndexInfo{
			{Name: "byTotal", Properties: []string{"Total"}, Ready: true, Covering: covering},
			{Name: "byCity", Properties: []string{"City", "Total"}, Ready: true, Covering: covering},
		}
		got, err := tbl.Indexes(ctx)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("Indexes = %v, %v; want %v", got, err, want)
		}
		// Declaring the same again (as an application does at every start)
		// is a no-op; the same name on other properties is not.
		if err := tbl.CreateIndex(ctx, "byTotal", "Total"); err != nil {
			t.Errorf("CreateIndex of a ready index, the same again: %v; want nil", err)
		}
		if got, err := tbl.Indexes(ctx); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after declaring byTotal again, Indexes = %v, %v; want %v", got, err, want)
		}
		if err := tbl.CreateIndex(ctx, "byTotal", "Other"); !errors.Is(err, localtable.ErrIndexExists) {
			t.Errorf("CreateIndex of a taken name: %v; want ErrIndexExists", err)
		}
		for _, bad := range [][]string{{"x y", "P"}, {"", "P"}, {"ok"}, {"ok", "PartitionKey"}, {"ok", "Timestamp"}, {"ok", "P", "P"}, {"ok", "1P"}, {"ok", "a", "b", "c", "d", "e"}} {
			if err := tbl.CreateIndex(ctx, bad[0], bad[1:]...); !errors.Is(err, localtable.ErrInvalidInput) {
				t.Errorf("CreateIndex(%q): %v; want ErrInvalidInput", bad, err)
			}
		}
		if err := tbl.DropIndex(ctx, "nope"); !errors.Is(err, localtable.ErrIndexNotFound) {
			t.Errorf("DropIndex of no index: %v; want ErrIndexNotFound", err)
		}
		_, err = tbl.Insert(ctx, tabletest.Ent("p", "r", "Total", int32(3), "City", "Oslo"))
		tabletest.Must(t, err)
		tabletest.Must(t, tbl.DropIndex(ctx, "byTotal"))
		got, _ = tbl.Indexes(ctx)
		if len(got) != 1 || got[0].Name != "byCity" {
			t.Fatalf("after DropIndex, Indexes = %v", got)
		}
		mustVerify(t, a)
		// Dropped with the table: a table re-created under the name has none.
		tabletest.Must(t, a.DeleteTable(ctx, "tbl1"))
		tbl2, err := a.CreateTable(ctx, "tbl1")
		tabletest.Must(t, err)
		if got, err := tbl2.Indexes(ctx); err != nil || len(got) != 0 {
			t.Fatalf("Indexes of a re-created table = %v, %v", got, err)
		}
		mustVerify(t, a)
		if err := tbl.CreateIndex(ctx, "x", "P"); err == nil {
			// tbl names the re-created table: fine either way, but it must
			// then be listed.
			if got, _ := tbl2.Indexes(ctx); len(got) != 1 {
				t.Fatalf("Indexes = %v", got)
			}
		}
	})
}

func TestIndexPersists(t *testing.T) {
	ctx := context.Background()
	r := tabletest.NewReopener(t)
	a := r.Open(nil)
	tbl, err := a.CreateTable(ctx, "Orders")
	tabletest.Must(t, err)
	_, err = tbl.Insert(ctx, tabletest.Ent("p", "1", "Total", 5.5))
	tabletest.Must(t, err)
	tabletest.Must(t, tbl.CreateIndex(ctx, "byTotal", "Total"))
	a = r.Open(nil)
	tbl, err = a.GetTable(ctx, "Orders")
	tabletest.Must(t, err)
	got, err := tbl.Indexes(ctx)
	if err != nil || len(got) != 1 || got[0].Name != "byTotal" || !got[0].Ready {
		t.Fatalf("after reopen, Indexes = %v, %v", got, err)
	}
	// Still maintained and used after the reopen.
	_, err = tbl.Insert(ctx, tabletest.Ent("p", "2", "Total", 7.5))
	tabletest.Must(t, err)
	mustVerify(t, a)
	page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: mustParse(t, "Total gt 6.0")})
	tabletest.Must(t, err)
	if len(page.Entities) != 1 || page.Entities[0].RowKey != "2" {
		t.Fatalf("query after reopen: %v", tabletest.KeysOf(page.Entities))
	}
}

// indexProps are the values the maintenance test writes: V and W take
// every Edm type, or are absent.
func randIndexValue(rng *rand.Rand) (localtable.Value, bool) {
	switch rng.IntN(10) {
	case 0:
		return localtable.Value{}, false
	case 1:
		return localtable.StringValue([]string{"", "a", "a\x00", "b", "é", "😀"}[rng.IntN(6)]), true
	case 2:
		return localtable.Int32Value(int32(rng.IntN(7) - 3)), true
	case 3:
		return localtable.Int64Value(int64(rng.IntN(7) - 3)), true
	case 4:
		return localtable.DoubleValue([]float64{-1.5, 0, math.Copysign(0, -1), 2, math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(7)]), true
	case 5:
		return localtable.BoolValue(rng.IntN(2) == 0), true
	case 6:
		return localtable.DateTimeTicksValue(6e17 + int64(rng.IntN(3))*1e15), true
	case 7:
		return localtable.GUIDValue(localtable.GUID{byte(rng.IntN(3)), 0xFF}), true
	case 8:
		return localtable.BinaryValue([]byte{byte(rng.IntN(2)), 0}[:rng.IntN(3)]), true
	}
	return localtable.Int32Value(int32(rng.IntN(3))), true
}

func randIndexEntity(rng *rand.Rand, rk string) localtable.Entity {
	e := localtable.Entity{PartitionKey: "p" + fmt.Sprint(rng.IntN(2)), RowKey: rk, Properties: localtable.Properties{}}
	for _, p := range []string{"V", "W"} {
		if v, ok := randIndexValue(rng); ok {
			e.Properties[p] = v
		}
	}
	return e
}

// TestIndexMaintained runs random writes of every kind, failing ones
// among them, into a table with indexes, on every engine, and checks
// after each batch that Verify finds every index exactly as its table
// calls for.
func TestIndexMaintained(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		tabletest.Must(t, tbl.CreateIndex(ctx, "byV", "V"))
		tabletest.Must(t, tbl.CreateIndex(ctx, "byVW", "V", "W"))
		tabletest.Must(t, tbl.CreateIndex(ctx, "byW", "W"))
		rng := rand.New(rand.NewPCG(21, 1))
		rks := []string{"a", "b", "c", "d", "e", "f"}
		lastTag := localtable.ETagAny
		for round := range 40 {
			for range 10 {
				e := randIndexEntity(rng, rks[rng.IntN(len(rks))])
				var err error
				switch rng.IntN(7) {
				case 0:
					lastTag, err = tbl.Insert(ctx, e)
					if err != nil {
						lastTag = localtable.ETagAny
					}
				case 1:
					var tag localtable.ETag
					tag, err = tbl.Update(ctx, e, &localtable.UpdateOptions{IfMatch: lastTag}) // often stale
					if err == nil {
						lastTag = tag
					}
				case 2:
					_, err = tbl.Update(ctx, e, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge})
				case 3:
					_, err = tbl.Upsert(ctx, e, nil)
				case 4:
					_, err = tbl.Upsert(ctx, e, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})
				case 5:
					err = tbl.Delete(ctx, e.PartitionKey, e.RowKey, nil)
				case 6:
					var acts []localtable.Action
					for i, rk := range rks[:1+rng.IntN(4)] {
						e := randIndexEntity(rng, rk)
						e.PartitionKey = "p0"
						typ := []localtable.ActionType{localtable.ActionUpsertReplace, localtable.ActionUpsertMerge, localtable.ActionInsert, localtable.ActionDelete}[rng.IntN(4)]
						if i == 0 && rng.IntN(3) == 0 {
							typ = localtable.ActionUpdateReplace // fails when absent: the whole transaction
						}
						acts = append(acts, localtable.Action{Type: typ, Entity: e})
					}
					_, err = tbl.Transact(ctx, acts)
				}
				if err != nil && !errors.Is(err, localtable.ErrEntityExists) && !errors.Is(err, localtable.ErrEntityNotFound) && !errors.Is(err, localtable.ErrConditionNotMet) {
					var te *localtable.TransactionError
					if !errors.As(err, &te) {
						t.Fatalf("round %d: %v", round, err)
					}
				}
			}
			mustVerify(t, a)
		}
	})
}

// TestIndexAcrossProcesses: on a shared engine, an index one account
// declares is maintained by the writes of another, whose catalog cache
// did not know it, and used by its queries.
func TestIndexAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	store := sharedmem.New()
	a := tabletest.OpenAccount(t, tabletest.Engine{}, &localtable.Options{Engine: store.Open()})
	b := tabletest.OpenAccount(t, tabletest.Engine{}, &localtable.Options{Engine: store.Open()})
	ta, err := a.CreateTable(ctx, "Orders")
	tabletest.Must(t, err)
	tb, err := b.GetTable(ctx, "Orders")
	tabletest.Must(t, err)
	_, err = tb.Insert(ctx, tabletest.Ent("p", "0", "Total", 1.0)) // b caches the table
	tabletest.Must(t, err)
	tabletest.Must(t, ta.CreateIndex(ctx, "byTotal", "Total"))
	for i := 1; i <= 50; i++ {
		_, err = tb.Insert(ctx, tabletest.Ent("p", fmt.Sprint(i), "Total", float64(i)))
		tabletest.Must(t, err)
	}
	tabletest.Must(t, tb.Delete(ctx, "p", "7", nil))
	mustVerify(t, a)
	page, err := tb.Query(ctx, &localtable.QueryOptions{Filter: mustParse(t, "Total ge 5.0 and Total lt 9.0")})
	tabletest.Must(t, err)
	if got := strings.Join(tabletest.KeysOf(page.Entities), " "); got != "p/5 p/6 p/8" || page.Stats.Index != "byTotal" {
		t.Fatalf("b's query: %s via index %q; want p/5 p/6 p/8 via byTotal", got, page.Stats.Index)
	}
	// Dropped by a: b's next query must not read the dropped index.
	tabletest.Must(t, ta.DropIndex(ctx, "byTotal"))
	page, err = tb.Query(ctx, &localtable.QueryOptions{Filter: mustParse(t, "Total ge 5.0 and Total lt 9.0")})
	tabletest.Must(t, err)
	if got := strings.Join(tabletest.KeysOf(page.Entities), " "); got != "p/5 p/6 p/8" || page.Stats.Index != "" {
		t.Fatalf("b's query after the drop: %s via index %q", got, page.Stats.Index)
	}
	mustVerify(t, b)
}

// TestIndexPlanner checks when the planner reads an index and what the
// page reports: a selective filter reads the index (Stats.Index, Scanned
// = entries, plus the entities fetched when the index is not covering, as
// on a shared engine), one whose key range is smaller scans it, typed
// comparisons read the entries of their types only.
func TestIndexPlanner(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		var acts []localtable.Action
		for i := range 400 {
			pk := fmt.Sprintf("p%d", i%4)
			e := tabletest.Ent(pk, fmt.Sprintf("%03d", i), "N", int32(i))
			if i%10 == 0 {
				e.Properties["N"] = localtable.DoubleValue(float64(i) + 0.5)
			}
			if i%50 == 0 {
				e.Properties["N"] = localtable.StringValue("s")
			}
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: e})
			if len(acts) == 100 || i == 399 {
				for _, a := range acts {
					_, err := tbl.Insert(ctx, a.Entity)
					tabletest.Must(t, err)
				}
				acts = nil
			}
		}
		tabletest.Must(t, tbl.CreateIndex(ctx, "byN", "N"))
		covering := eng.Name == "memory"
		for _, c := range []struct {
			filter  string
			index   string
			matches int
		}{
			{"N eq 5", "byN", 1},
			{"N eq 10", "byN", 0},          // 10 holds the Double 10.5
			{"N eq 10.5", "byN", 1},        // a Double literal reads Double entries alone
			{"N gt 390", "byN", 10},        // the Double 390.5 and the Int32s 391..399
			{"N eq 's'", "byN", 8},         // the strings
			{"N ge 'a'", "byN", 8},         // strings only
			{"N eq 3 or N eq 7", "byN", 2}, // or of eq
			{"N lt 0", "byN", 0},
			{"N ne 3", "", 391}, // ne bounds nothing: scanned (Int32s, Doubles less N eq 3)
			// 392 entries, fewer than the table's 400 entities, and no
			// fetch; not covering, 392 fetches too: scanned.
			{"N gt 0", "byN*", 392},
			{"N gt 0 or N eq 's'", "", 400},                                // as many entries as the table has entities: scanned
			{"PartitionKey eq 'p1' and RowKey eq '005' and N eq 5", "", 1}, // the key range is smaller
		} {
			f := mustParse(t, c.filter)
			if c.index == "byN*" { // through the index if it is covering
				c.index = ""
				if covering {
					c.index = "byN"
				}
			}
			page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: f})
			tabletest.Must(t, err)
			n := 0
			for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: f}) {
				tabletest.Must(t, err)
				if !f.Match(&e) {
					t.Fatalf("%s: returned %s/%s, which it does not match", c.filter, e.PartitionKey, e.RowKey)
				}
				n++
			}
			if page.Stats.Index != c.index || n != c.matches {
				t.Errorf("%s: index %q, %d matches; want %q, %d", c.filter, page.Stats.Index, n, c.index, c.matches)
			}
			scanned := c.matches // entries
			if !covering {
				scanned *= 2 // and fetches
			}
			if c.index != "" && page.Stats.Scanned != scanned && !slices.Contains([]string{"N gt 390"}, c.filter) {
				t.Errorf("%s: scanned %d; want %d (entries, and fetches if the index is not covering)", c.filter, page.Stats.Scanned, scanned)
			}
			plan, err := tbl.Explain(ctx, &localtable.QueryOptions{Filter: f})
			tabletest.Must(t, err)
			if c.index != "" && (!strings.HasPrefix(plan, "index: read through index "+c.index) || !strings.Contains(plan, "not scanned: the index is read instead")) {
				t.Errorf("%s: Explain = %q", c.filter, plan)
			}
			// A page read through an index is no full scan, whatever the
			// filter's own plan (without the index) says.
			if c.index != "" && (strings.Contains(plan, "full scan") || !strings.Contains(plan, "where a scan")) {
				t.Errorf("%s: Explain = %q: it contradicts the index read, or does not say what the scan would read", c.filter, plan)
			}
			if c.index == "" && strings.Contains(plan, "the index is read") {
				t.Errorf("%s: Explain = %q", c.filter, plan)
			}
			if c.index == "" && !strings.HasPrefix(plan, "no index: ") {
				t.Errorf("%s: Explain = %q", c.filter, plan)
			}
		}
	})
}

func mustParse(t testing.TB, s string) *filter.Filter {
	t.Helper()
	f, err := filter.Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return f
}

// TestIndexBuildUnderWrites: an index built while writers upsert, merge
// and delete in the table (from another account over the same store, on
// the shared engine) ends exactly as its table calls for.
func TestIndexBuildUnderWrites(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		writer := tbl
		if eng.Name == "shared" {
			store := sharedmem.New()
			a = tabletest.OpenAccount(t, eng, &localtable.Options{Engine: store.Open()})
			b := tabletest.OpenAccount(t, eng, &localtable.Options{Engine: store.Open()})
			var err error
			tbl, err = a.CreateTable(ctx, "tbl1")
			tabletest.Must(t, err)
			writer, err = b.GetTable(ctx, "tbl1")
			tabletest.Must(t, err)
		}
		rng := rand.New(rand.NewPCG(7, 7))
		for p := range 30 {
			var acts []localtable.Action
			for r := range 100 {
				e := randIndexEntity(rng, fmt.Sprintf("%03d", r))
				e.PartitionKey = fmt.Sprintf("p%02d", p)
				acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: e})
			}
			_, err := tbl.Transact(ctx, acts)
			tabletest.Must(t, err)
		}
		stop := make(chan struct{})
		errs := make(chan error, 3)
		for w := range 3 {
			go func() {
				rng := rand.New(rand.NewPCG(uint64(w), 99))
				for {
					select {
					case <-stop:
						errs <- nil
						return
					default:
					}
					e := randIndexEntity(rng, fmt.Sprintf("%03d", rng.IntN(100)))
					e.PartitionKey = fmt.Sprintf("p%02d", rng.IntN(30))
					var err error
					switch rng.IntN(3) {
					case 0:
						_, err = writer.Upsert(ctx, e, nil)
					case 1:
						_, err = writer.Upsert(ctx, e, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})
					default:
						err = writer.Delete(ctx, e.PartitionKey, e.RowKey, nil)
						if errors.Is(err, localtable.ErrEntityNotFound) {
							err = nil
						}
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		err := tbl.CreateIndex(ctx, "byV", "V")
		err2 := tbl.CreateIndex(ctx, "byWV", "W", "V")
		close(stop)
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatalf("writer: %v", err)
			}
		}
		tabletest.Must(t, err)
		tabletest.Must(t, err2)
		mustVerify(t, a)
		infos, err := tbl.Indexes(ctx)
		if err != nil || len(infos) != 2 || !infos[0].Ready || !infos[1].Ready {
			t.Fatalf("Indexes = %+v, %v", infos, err)
		}
	})
}

// lyingExact is a filter whose Match and MatchReader reject every entity
// while its PropertyRanges and PropertyRangesExact are the filter's: what
// a query returns of it shows whether the entities it fetched through an
// index were matched again.
type lyingExact struct{ f *filter.Filter }

func (l lyingExact) Match(*localtable.Entity) bool              { return false }
func (l lyingExact) MatchReader(localtable.PropertyReader) bool { return false }
func (l lyingExact) KeyRanges() ([]localtable.KeyRange, bool)   { return l.f.KeyRanges() }
func (l lyingExact) String() string                             { return l.f.String() }
func (l lyingExact) PropertyRangesExact(name string) bool       { return l.f.PropertyRangesExact(name) }
func (l lyingExact) PropertyRanges(n string) ([]localtable.ValueRange, bool) {
	return l.f.PropertyRanges(n)
}

// TestIndexExactSkipsMatch: a page read through an index whose value
// ranges are exactly the filter (PropertyRangesExact, no key ranges)
// returns the entities it fetches without matching them again, pages
// and Select included; with key ranges too, each is matched.
func TestIndexExactSkipsMatch(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		for i := range 300 {
			_, err := tbl.Insert(ctx, tabletest.Ent(fmt.Sprintf("p%d", i%3), fmt.Sprintf("%03d", i), "N", int32(i), "M", "x"))
			tabletest.Must(t, err)
		}
		tabletest.Must(t, tbl.CreateIndex(ctx, "byN", "N"))
		for _, c := range []struct {
			filter string
			want   int
		}{
			{"N lt 10", 10},                         // exact: the index answers it
			{"N ge 5 and N lt 15 or N eq 200", 11},  // exact too
			{"PartitionKey eq 'p1' and N lt 10", 0}, // key ranges: matched, and the lie rejects all
		} {
			f, err := filter.Parse(c.filter)
			tabletest.Must(t, err)
			opts := localtable.QueryOptions{Filter: lyingExact{f}, PageSize: 4, Select: []string{"N"}}
			n := 0
			for {
				page, err := tbl.Query(ctx, &opts)
				tabletest.Must(t, err)
				if page.Stats.Index != "byN" {
					t.Fatalf("%s: read index %q, want byN", c.filter, page.Stats.Index)
				}
				for _, e := range page.Entities {
					if len(e.Properties) != 1 || !f.Match(&e) {
						t.Errorf("%s: returned %s/%s %v", c.filter, e.PartitionKey, e.RowKey, e.Properties)
					}
				}
				n += len(page.Entities)
				if page.Continuation.IsZero() {
					break
				}
				opts.Continuation = page.Continuation
			}
			if n != c.want {
				t.Errorf("%s: %d entities, want %d", c.filter, n, c.want)
			}
		}
	})
}
