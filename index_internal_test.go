package localtable

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
	"github.com/localtable/localtable/storage/pebble"
)

// testEngines are the engines of the index tests here: the memory engine
// and a shared one (the pebble engine runs them in tests/).
// openOrders opens an account on a new engine of open, closed at the
// test's end, and creates its table Orders.
func openOrders(t *testing.T, open func() storage.Engine) (*Account, *Table) {
	t.Helper()
	return openTable(t, &Options{Engine: open()}, "Orders")
}

// openTable opens an account with opts, closed at the test's end, and
// creates its table name.
func openTable(t *testing.T, opts *Options, name string) (*Account, *Table) {
	t.Helper()
	a, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	tbl, err := a.CreateTable(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return a, tbl
}

func testIndexEngines() map[string]func() storage.Engine {
	return map[string]func() storage.Engine{
		"memory": func() storage.Engine { return memory.New(nil) },
		"shared": func() storage.Engine { return sharedmem.New().Open() },
	}
}

func verifyOK(t *testing.T, a *Account) {
	t.Helper()
	rep, err := a.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("Verify: %v %+v", rep.Problems, rep.Tables)
	}
}

// indexEq is a Predicate that bounds property p to one value: the
// planner's view of "p eq v", without package filter.
type indexEq struct {
	p string
	v Value
}

func (q indexEq) Match(e *Entity) bool {
	v, ok := e.Properties[q.p]
	return ok && v.Equal(q.v)
}
func (q indexEq) KeyRanges() ([]KeyRange, bool) { return nil, false }
func (q indexEq) String() string                { return q.p + " eq …" }
func (q indexEq) PropertyRanges(name string) ([]ValueRange, bool) {
	if name != q.p {
		return nil, false
	}
	return []ValueRange{{Kind: q.v.Kind(), Low: q.v, High: q.v}}, true
}

// TestIndexBuildSteps: an index declared on a table of entities is built
// in steps of indexBuildChunk entities, each a commit; until the last it is
// not ready and queries scan; writes between the steps (before and after
// the cursor) are kept; a build that stops resumes with CreateIndex.
func TestIndexBuildSteps(t *testing.T) {
	defer func(n int) { indexBuildChunk = n }(indexBuildChunk)
	indexBuildChunk = 7
	ctx := context.Background()
	for name, open := range testIndexEngines() {
		t.Run(name, func(t *testing.T) {
			a, tbl := openOrders(t, open)
			for i := range 40 {
				e := Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%02d", i), Properties: Properties{"V": Int32Value(int32(i % 5))}}
				if i%9 == 0 {
					delete(e.Properties, "V")
				}
				if _, err := tbl.Insert(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
			id, ready, err := tbl.declareIndex(ctx, "byV", []string{"V"}, false)
			if err != nil || ready {
				t.Fatalf("declareIndex: %v, ready %v", err, ready)
			}
			for step := range 3 {
				done, err := tbl.buildStep(ctx, id, indexBuildChunk)
				if err != nil || done {
					t.Fatalf("step %d: %v, done %v", step, err, done)
				}
			}
			verifyOK(t, a) // checked up to the cursor
			infos, _ := tbl.Indexes(ctx)
			if len(infos) != 1 || infos[0].Ready {
				t.Fatalf("Indexes mid-build = %+v", infos)
			}
			page, err := tbl.Query(ctx, &QueryOptions{Filter: indexEq{"V", Int32Value(3)}})
			if err != nil || page.Stats.Index != "" {
				t.Fatalf("a query mid-build read index %q (%v)", page.Stats.Index, err)
			}
			// Writes before and after the cursor (at "20"), kept by the writes.
			for _, rk := range []string{"03", "33"} {
				if _, err := tbl.Upsert(ctx, Entity{PartitionKey: "p", RowKey: rk, Properties: Properties{"V": Int32Value(3)}}, nil); err != nil {
					t.Fatal(err)
				}
			}
			for _, rk := range []string{"08", "38"} { // V was 3
				if err := tbl.Delete(ctx, "p", rk, nil); err != nil {
					t.Fatal(err)
				}
			}
			verifyOK(t, a)
			// CreateIndex resumes the build where it stopped.
			if err := tbl.CreateIndex(ctx, "byV", "V"); err != nil {
				t.Fatal(err)
			}
			infos, _ = tbl.Indexes(ctx)
			if !infos[0].Ready {
				t.Fatalf("Indexes after the build = %+v", infos)
			}
			verifyOK(t, a)
			page, err = tbl.Query(ctx, &QueryOptions{Filter: indexEq{"V", Int32Value(3)}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range page.Entities {
				got = append(got, e.RowKey)
			}
			// V is i%5, absent when i%9 is 0: 03 13 23 28 33 (08 and 38
			// are deleted, 18 lacks V).
			if want := "03 13 23 28 33"; strings.Join(got, " ") != want || page.Stats.Index != "byV" {
				t.Fatalf("V eq 3 = %v via %q; want %s via byV", got, page.Stats.Index, want)
			}
		})
	}
}

// TestIndexVerifyDamage: Verify reports an index entry that is missing,
// extra (of no entity) or stale (of an entity whose value differs), and an
// entry of an index no table declares.
func TestIndexVerifyDamage(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, want string
		damage     func(a *Account, id uint64, entry []byte) error
	}{
		{"missing", "missing entry", func(a *Account, _ uint64, entry []byte) error {
			b := a.eng.NewBatch()
			b.Delete(entry)
			return b.Commit(true)
		}},
		{"extra", "extra entry", func(a *Account, id uint64, _ []byte) error {
			x := &indexDef{ID: 1, Props: []string{"V"}}
			k := appendIndexEntry(nil, id, x, keyenc.AppendEntityKey(nil, id, "p", "zz"), []Value{Int32Value(1)})
			b := a.eng.NewBatch()
			b.Set(k, emptyValue)
			return b.Commit(true)
		}},
		{"stale", "stale entry", func(a *Account, id uint64, entry []byte) error {
			x := &indexDef{ID: 1, Props: []string{"V"}}
			k := appendIndexEntry(nil, id, x, keyenc.AppendEntityKey(nil, id, "p", "r"), []Value{Int32Value(2)})
			b := a.eng.NewBatch()
			b.Delete(entry)
			b.Set(k, emptyValue)
			return b.Commit(true)
		}},
		{"unknown index", "index ID 9", func(a *Account, id uint64, _ []byte) error {
			x := &indexDef{ID: 9, Props: []string{"V"}}
			k := appendIndexEntry(nil, id, x, keyenc.AppendEntityKey(nil, id, "p", "r"), []Value{Int32Value(1)})
			b := a.eng.NewBatch()
			b.Set(k, emptyValue)
			return b.Commit(true)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := Open(nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			tbl, _ := a.CreateTable(ctx, "Orders")
			if _, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: "r", Properties: Properties{"V": Int32Value(1)}}); err != nil {
				t.Fatal(err)
			}
			if err := tbl.CreateIndex(ctx, "byV", "V"); err != nil {
				t.Fatal(err)
			}
			verifyOK(t, a)
			lt, _ := a.lookup(ctx, "Orders")
			x := &(*lt.indexes.Load())[0]
			entry := appendIndexEntry(nil, lt.id, x, keyenc.AppendEntityKey(nil, lt.id, "p", "r"), []Value{Int32Value(1)})
			if err := c.damage(a, lt.id, entry); err != nil {
				t.Fatal(err)
			}
			rep, err := a.Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || !strings.Contains(fmt.Sprint(rep.Tables[0].Problems), c.want) {
				t.Fatalf("Verify after damage %q: %v %v; want a problem with %q", c.name, rep.Problems, rep.Tables[0].Problems, c.want)
			}
		})
	}
}

// TestIndexValueOrder: the index encoding orders the values of each Edm
// type as the service compares them (filter.Compare's rules, restated
// here), and is prefix-free, so that an entity's keys follow it intact.
func TestIndexValueOrder(t *testing.T) {
	ordered := [][]Value{
		{StringValue(""), StringValue("\x00"), StringValue("a"), StringValue("a\x00"), StringValue("ab"), StringValue("\ud7ff"), StringValue("😀"), StringValue("\ue000"), StringValue("\uffff")},
		{Int32Value(-1 << 31), Int32Value(-1), Int32Value(0), Int32Value(1), Int32Value(1<<31 - 1)},
		{Int64Value(-1 << 63), Int64Value(-1), Int64Value(0), Int64Value(1 << 40), Int64Value(1<<63 - 1)},
		{DoubleValue(negInf()), DoubleValue(-1e300), DoubleValue(-1), DoubleValue(-5e-324), DoubleValue(0), DoubleValue(5e-324), DoubleValue(1), DoubleValue(posInf()), DoubleValue(nan())},
		{BoolValue(false), BoolValue(true)},
		{DateTimeTicksValue(0), DateTimeTicksValue(1), DateTimeTicksValue(maxTicks)},
		{GUIDValue(GUID{}), GUIDValue(GUID{0, 1}), GUIDValue(GUID{1}), GUIDValue(GUID{0xff})},
		{BinaryValue(nil), BinaryValue([]byte{0}), BinaryValue([]byte{0, 0}), BinaryValue([]byte{0, 1}), BinaryValue([]byte{1}), BinaryValue([]byte{0xff, 0})},
	}
	for _, vs := range ordered {
		for i := 1; i < len(vs); i++ {
			a := appendIndexValue(nil, vs[i-1])
			b := appendIndexValue(nil, vs[i])
			// Followed by any key, the order holds: compare with the
			// largest suffix after a and the smallest after b.
			a = append(a, 0xff, 0xff)
			b = append(b, 0)
			if string(a) >= string(b) {
				t.Errorf("%v encodes after %v", vs[i-1], vs[i])
			}
		}
		for _, v := range vs {
			enc := appendIndexValue(nil, v)
			rest, err := skipIndexValue(append(enc, 'k'))
			if err != nil || string(rest) != "k" {
				t.Errorf("skipIndexValue of %v: %q, %v", v, rest, err)
			}
		}
	}
	if z, nz := appendIndexValue(nil, DoubleValue(0)), appendIndexValue(nil, DoubleValue(negZero())); string(z) != string(nz) {
		t.Error("-0 and 0 encode apart; the service finds them equal")
	}
}

func negInf() float64  { return math.Inf(-1) }
func posInf() float64  { return math.Inf(1) }
func nan() float64     { return math.NaN() }
func negZero() float64 { return math.Copysign(0, -1) }

// TestIndexBuildResumesAfterReopen: a build stopped after some steps (its
// process ended: each step is its own durable commit) leaves the index
// declared and not ready in the store; a reopened account keeps it with
// its writes, does not use it, and CreateIndex resumes it to ready.
func TestIndexBuildResumesAfterReopen(t *testing.T) {
	defer func(n int) { indexBuildChunk = n }(indexBuildChunk)
	indexBuildChunk = 10
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *Account {
		db, err := pebble.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := Open(&Options{Engine: db})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := open()
	tbl, err := a.CreateTable(ctx, "Orders")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 55 {
		if _, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%02d", i), Properties: Properties{"V": Int64Value(int64(i % 4))}}); err != nil {
			t.Fatal(err)
		}
	}
	id, _, err := tbl.declareIndex(ctx, "byV", []string{"V"}, false)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := tbl.buildStep(ctx, id, indexBuildChunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	a = open()
	defer a.Close()
	tbl, err = a.GetTable(ctx, "Orders")
	if err != nil {
		t.Fatal(err)
	}
	if infos, _ := tbl.Indexes(ctx); len(infos) != 1 || infos[0].Ready {
		t.Fatalf("after reopen, Indexes = %+v; want byV not ready", infos)
	}
	verifyOK(t, a)
	// Writes after the reopen keep it, before and after its cursor.
	if err := tbl.Delete(ctx, "p", "01", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Upsert(ctx, Entity{PartitionKey: "p", RowKey: "50", Properties: Properties{"V": Int64Value(1)}}, nil); err != nil {
		t.Fatal(err)
	}
	q := indexEq{"V", Int64Value(1)}
	if page, err := tbl.Query(ctx, &QueryOptions{Filter: q}); err != nil || page.Stats.Index != "" {
		t.Fatalf("a query read the unbuilt index %q (%v)", page.Stats.Index, err)
	}
	if err := tbl.CreateIndex(ctx, "byV", "V"); err != nil {
		t.Fatal(err)
	}
	verifyOK(t, a)
	page, err := tbl.Query(ctx, &QueryOptions{Filter: q})
	if err != nil || page.Stats.Index != "byV" {
		t.Fatalf("after the build: index %q (%v)", page.Stats.Index, err)
	}
	// V is i%4: 05 09 … 53, and 50; 01 is deleted.
	if n := len(page.Entities); n != 14 {
		t.Fatalf("V eq 1: %d entities; want 14", n)
	}
}

// TestIndexPlanKnowsTableSize: the planner learns that a table holds more
// entities than an index plan reads (liveTable.minKeys), so that the next
// plan of a filter without key ranges need not count them again, and each
// deletion lowers what it knows: once the table holds no more entities
// than the plan reads, it scans again.
func TestIndexPlanKnowsTableSize(t *testing.T) {
	ctx := context.Background()
	for name, open := range testIndexEngines() {
		t.Run(name, func(t *testing.T) {
			a, tbl := openOrders(t, open)
			for i := range 40 {
				if _, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%02d", i), Properties: Properties{"V": Int32Value(int32(i % 4))}}); err != nil {
					t.Fatal(err)
				}
			}
			if err := tbl.CreateIndex(ctx, "byV", "V"); err != nil {
				t.Fatal(err)
			}
			q := &QueryOptions{Filter: indexEq{"V", Int32Value(0)}} // 10 of 40
			page, err := tbl.Query(ctx, q)
			if err != nil || page.Stats.Index != "byV" || len(page.Entities) != 10 {
				t.Fatalf("V eq 0: %d entities through %q, %v; want 10 through byV", len(page.Entities), page.Stats.Index, err)
			}
			lt, err := a.strategy.current(ctx, "Orders")
			if err != nil {
				t.Fatal(err)
			}
			cost := 10 // entries, and as many fetches if the index is not covering
			if !(*lt.indexes.Load())[0].Covering {
				cost = 20
			}
			if got := lt.minKeys.Load(); got <= int64(cost) {
				t.Fatalf("after the plan, the table is known to hold at least %d entities; want more than %d", got, cost)
			}
			// Entities with V 1..3 deleted until the table holds as many
			// as the plan reads: scanned.
			left := 40
			for i := 0; i < 40 && left > cost; i++ {
				if i%4 == 0 {
					continue
				}
				if err := tbl.Delete(ctx, "p", fmt.Sprintf("%02d", i), nil); err != nil {
					t.Fatal(err)
				}
				left--
			}
			n, err := tbl.Count(ctx, nil)
			if err != nil || n != cost {
				t.Fatalf("Count = %d, %v; want %d", n, err, cost)
			}
			page, err = tbl.Query(ctx, q)
			if err != nil || page.Stats.Index != "" || len(page.Entities) != 10 {
				t.Fatalf("V eq 0 on %d entities: %d entities through %q, %v; want 10, scanned", n, len(page.Entities), page.Stats.Index, err)
			}
		})
	}
}
