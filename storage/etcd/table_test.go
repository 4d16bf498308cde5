package etcd_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/storage/etcd"
)

// The table layer on the etcd engine: localtable.Open with the engine as
// Options.Engine, as a user would run it.

// openAccount opens an account on an engine of its own prefix (or of
// prefix, when not empty). The account is closed with the test.
func openAccount(tb testing.TB, prefix string) (*localtable.Account, *etcd.Engine) {
	tb.Helper()
	e := openEngine(tb, &etcd.Options{Prefix: prefix})
	a, err := localtable.Open(&localtable.Options{Engine: e})
	if err != nil {
		tb.Fatalf("localtable.Open: %v", err)
	}
	tb.Cleanup(func() { a.Close() })
	return a, e
}

// TestTableEdmTypes writes an entity with a property of every Edm type,
// reads it back, merges, replaces and deletes it; then a second account on
// the same prefix (another process, in effect) reads what the first wrote.
func TestTableEdmTypes(t *testing.T) {
	prefix := newPrefix("edm")
	a, _ := openAccount(t, prefix)
	tbl, err := a.CreateTable(bg(), "Types")
	must(t, err)
	props := localtable.Properties{
		"Str":     localtable.StringValue("héllo \x00 wörld"),
		"Empty":   localtable.StringValue(""),
		"I32":     localtable.Int32Value(math.MinInt32),
		"I64":     localtable.Int64Value(math.MaxInt64),
		"Dbl":     localtable.DoubleValue(-1.5e300),
		"NaN":     localtable.DoubleValue(math.NaN()),
		"Inf":     localtable.DoubleValue(math.Inf(-1)),
		"Bool":    localtable.BoolValue(true),
		"When":    localtable.DateTimeValue(time.Date(2024, 2, 29, 23, 59, 59, 123456700, time.UTC)),
		"Guid":    localtable.GUIDValue(localtable.GUID{0: 0xde, 1: 0xad, 15: 0x01}),
		"Bin":     localtable.BinaryValue([]byte{0, 1, 2, 0xff}),
		"BigBin":  localtable.BinaryValue(make([]byte, 60<<10)),
		"Unicode": localtable.StringValue("日本語 🎉"),
	}
	tag, err := tbl.Insert(bg(), localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: props})
	must(t, err)
	got, err := tbl.Get(bg(), "p", "r", nil)
	must(t, err)
	if got.ETag != tag {
		t.Errorf("Get ETag %s, Insert returned %s", got.ETag, tag)
	}
	wantProps(t, got.Properties, props)

	// Merge one property, then replace with another set.
	merged, err := tbl.Update(bg(), localtable.Entity{PartitionKey: "p", RowKey: "r",
		Properties: localtable.Properties{"I32": localtable.Int32Value(7)}}, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: tag})

	must(t, err)
	props["I32"] = localtable.Int32Value(7)
	got, err = tbl.Get(bg(), "p", "r", nil)
	must(t, err)
	wantProps(t, got.Properties, props)
	if _, err := tbl.Update(bg(), localtable.Entity{PartitionKey: "p", RowKey: "r"}, &localtable.UpdateOptions{IfMatch: tag}); !errors.Is(err, localtable.ErrConditionNotMet) {
		t.Errorf("Update with a stale ETag = %v, want ErrConditionNotMet", err)
	}
	replaced := localtable.Properties{"Only": localtable.Int64Value(1)}
	_, err = tbl.Update(bg(), localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: replaced}, &localtable.UpdateOptions{IfMatch: merged})
	must(t, err)
	got, err = tbl.Get(bg(), "p", "r", nil)
	must(t, err)
	wantProps(t, got.Properties, replaced)

	// A second account on the same prefix sees the table and the entity.
	b, _ := openAccount(t, prefix)
	got2, err := b.Table("types").Get(bg(), "p", "r", nil)
	must(t, err)
	if got2.ETag != got.ETag {
		t.Errorf("second account reads ETag %s, want %s", got2.ETag, got.ETag)
	}
	wantProps(t, got2.Properties, replaced)

	must(t, tbl.Delete(bg(), "p", "r", &localtable.DeleteOptions{IfMatch: got.ETag}))
	if _, err := tbl.Get(bg(), "p", "r", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
		t.Errorf("Get after Delete = %v, want ErrEntityNotFound", err)
	}
}

func wantProps(t *testing.T, got, want localtable.Properties) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d properties, want %d: %v", len(got), len(want), got)
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("property %s missing", name)
			continue
		}
		if !g.Equal(w) && !(name == "NaN" && g.Kind() == w.Kind()) {
			t.Errorf("property %s = %v, want %v", name, g, w)
		}
	}
}

// TestTableTransactions pins that entity group transactions are all or
// nothing on etcd: one of 100 actions and nearly 4 MiB commits whole (at
// the recommended --max-request-bytes), and one whose last action fails
// leaves no trace.
func TestTableTransactions(t *testing.T) {
	a, _ := openAccount(t, "")
	tbl, err := a.CreateTable(bg(), "Txns")
	must(t, err)
	pad := strings.Repeat("x", 20_500) // 100 entities: just under 4 MiB
	acts := func(first, n int, typ localtable.ActionType) []localtable.Action {
		var out []localtable.Action
		for i := first; i < first+n; i++ {
			out = append(out, localtable.Action{Type: typ, Entity: localtable.Entity{
				PartitionKey: "p", RowKey: fmt.Sprintf("r%03d", i),
				Properties: localtable.Properties{"N": localtable.Int32Value(int32(i)), "Pad1": localtable.StringValue(pad), "Pad2": localtable.StringValue(pad)},
			}})
		}
		return out
	}
	big := acts(0, localtable.MaxTransactionActions, localtable.ActionInsert)
	size := 0
	for i := range big {
		size += localtable.PayloadSize(&big[i].Entity)
	}
	if size < localtable.MaxTransactionSize-100<<10 || size > localtable.MaxTransactionSize {
		t.Fatalf("the transaction's payload is %d bytes, want just under %d", size, localtable.MaxTransactionSize)
	}
	tags, err := tbl.Transact(bg(), big)
	must(t, err)
	if n := countEntities(t, tbl, nil); n != localtable.MaxTransactionActions {
		t.Fatalf("%d entities after a transaction of %d inserts", n, localtable.MaxTransactionActions)
	}
	// 99 new inserts and one of an existing entity: nothing applies.
	bad := append(acts(100, 99, localtable.ActionInsert), acts(0, 1, localtable.ActionInsert)...)
	_, err = tbl.Transact(bg(), bad)
	var te *localtable.TransactionError
	if !errors.As(err, &te) || te.Index != 99 || !errors.Is(err, localtable.ErrEntityExists) {
		t.Fatalf("Transact with a failing last action = %v, want TransactionError at 99 (EntityAlreadyExists)", err)
	}
	if n := countEntities(t, tbl, nil); n != localtable.MaxTransactionActions {
		t.Errorf("%d entities after a failed transaction, want %d", n, localtable.MaxTransactionActions)
	}
	// Updates and deletes in one transaction, guarded by the ETags.
	mixed := acts(0, 50, localtable.ActionUpdateMerge)
	for i := range mixed {
		mixed[i].IfMatch = tags[i]
	}
	for i := 50; i < 100; i++ {
		mixed = append(mixed, localtable.Action{Type: localtable.ActionDelete, Entity: localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%03d", i)}, IfMatch: tags[i]})
	}
	_, err = tbl.Transact(bg(), mixed)
	must(t, err)
	if n := countEntities(t, tbl, nil); n != 50 {
		t.Errorf("%d entities after deleting 50 of 100, want 50", n)
	}

	// With etcd's default --max-request-bytes (1.5 MiB), the same
	// transaction fails whole with ErrTooLarge.
	small := openEngine(t, &etcd.Options{MaxRequestBytes: etcd.DefaultMaxRequestBytes})
	sa, err := localtable.Open(&localtable.Options{Engine: small})
	must(t, err)
	defer sa.Close()
	stbl, err := sa.CreateTable(bg(), "Txns")
	must(t, err)
	if _, err := stbl.Transact(bg(), big); !errors.Is(err, etcd.ErrTooLarge) {
		t.Errorf("a 4 MiB transaction under a 1.5 MiB request limit = %v, want ErrTooLarge", err)
	}
	if n := countEntities(t, stbl, nil); n != 0 {
		t.Errorf("%d entities after a transaction too large for the cluster", n)
	}
}

func countEntities(t *testing.T, tbl *localtable.Table, f localtable.Predicate) int {
	t.Helper()
	n := 0
	for _, err := range tbl.QueryAll(bg(), &localtable.QueryOptions{Filter: f}) {
		must(t, err)
		n++
	}
	return n
}

// TestTablePagedQuery pins that queries page with continuations over etcd
// range reads: every entity once, in order, over pages of the engine's
// smallest size too.
func TestTablePagedQuery(t *testing.T) {
	for _, pageSize := range []int{0, 7} {
		t.Run(fmt.Sprintf("pagesize%d", pageSize), func(t *testing.T) {
			e := openEngine(t, &etcd.Options{PageSize: pageSize})
			a, err := localtable.Open(&localtable.Options{Engine: e})
			must(t, err)
			defer a.Close()
			tbl, err := a.CreateTable(bg(), "Paged")
			must(t, err)
			const parts, rows = 3, 90
			for p := range parts {
				var acts []localtable.Action
				for r := range rows {
					acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{
						PartitionKey: fmt.Sprintf("p%d", p), RowKey: fmt.Sprintf("r%03d", r),
						Properties: localtable.Properties{"Even": localtable.BoolValue(r%2 == 0)},
					}})
				}
				_, err := tbl.Transact(bg(), acts)
				must(t, err)
			}
			f, err := filter.Parse("PartitionKey ge 'p1' and Even eq true")
			must(t, err)
			var opts = localtable.QueryOptions{Filter: f, PageSize: 20}
			var seen []string
			pages := 0
			for {
				page, err := tbl.Query(bg(), &opts)
				must(t, err)
				pages++
				for _, ent := range page.Entities {
					seen = append(seen, ent.PartitionKey+"/"+ent.RowKey)
				}
				if page.Continuation.IsZero() {
					break
				}
				opts.Continuation = page.Continuation
			}
			var want []string
			for p := 1; p < parts; p++ {
				for r := 0; r < rows; r += 2 {
					want = append(want, fmt.Sprintf("p%d/r%03d", p, r))
				}
			}
			if fmt.Sprint(seen) != fmt.Sprint(want) {
				t.Errorf("query returned %d entities %v…, want %d", len(seen), head(seen), len(want))
			}
			if pages < len(want)/20 {
				t.Errorf("%d pages of PageSize 20 for %d entities", pages, len(want))
			}
		})
	}
}

func head(s []string) []string { return s[:min(len(s), 5)] }

// TestTableDelete pins that deleting a table removes its entities from
// etcd (one range deletion), and that a table created again with that
// name starts empty.
func TestTableDelete(t *testing.T) {
	a, e := openAccount(t, "")
	tbl, err := a.CreateTable(bg(), "Doomed")
	must(t, err)
	keep, err := a.CreateTable(bg(), "Kept")
	must(t, err)
	for i := range 3 {
		var acts []localtable.Action
		for r := range 100 {
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: fmt.Sprint(i), RowKey: fmt.Sprint(r)}})
		}
		_, err := tbl.Transact(bg(), acts)
		must(t, err)
	}
	_, err = keep.Insert(bg(), localtable.Entity{PartitionKey: "k", RowKey: "k"})
	must(t, err)
	raw := rawClient(t)
	before := rawCount(t, raw, e.Prefix())
	must(t, a.DeleteTable(bg(), "Doomed"))
	after := rawCount(t, raw, e.Prefix())
	// 300 entities and the catalog record are gone.
	if before-after != 301 {
		t.Errorf("etcd held %d keys before DeleteTable and %d after; want 301 fewer", before, after)
	}
	again, err := a.CreateTable(bg(), "Doomed")
	must(t, err)
	if n := countEntities(t, again, nil); n != 0 {
		t.Errorf("re-created table holds %d entities", n)
	}
	if n := countEntities(t, keep, nil); n != 1 {
		t.Errorf("the other table holds %d entities, want 1", n)
	}
}

func rawCount(t *testing.T, cli *clientv3.Client, prefix string) int64 {
	t.Helper()
	resp, err := cli.Get(bg(), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	must(t, err)
	return resp.Count
}
