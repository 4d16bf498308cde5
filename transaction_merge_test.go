package localtable_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/internal/tabletest"
)

// wideProps returns n string properties named prefix00…, a record larger
// than the small ones written beside it in a transaction.
func wideProps(prefix string, n int) localtable.Properties {
	p := localtable.Properties{}
	for i := range n {
		p[fmt.Sprintf("%s%02d", prefix, i)] = localtable.StringValue(strings.Repeat("x", 20))
	}
	return p
}

// checkTxnRows reads rows a, b (merged into 20 wide properties) and,
// when want3, c, and checks each whole.
func checkTxnRows(t *testing.T, tbl *localtable.Table, want3 bool) {
	t.Helper()
	rows := []struct {
		rk    string
		n     int64
		props int
	}{{"a", 1, 1}, {"b", 2, 21}, {"c", 3, 1}}
	if !want3 {
		rows = rows[:2]
	}
	for _, r := range rows {
		e, err := tbl.Get(ctx, "p", r.rk, nil)
		if err != nil {
			t.Errorf("Get %s: %v", r.rk, err)
			continue
		}
		if got := e.Properties["N"]; got.Int64() != r.n || len(e.Properties) != r.props {
			t.Errorf("%s: N = %v with %d properties; want %d with %d", r.rk, got, len(e.Properties), r.n, r.props)
		}
	}
}

// A merge in a transaction re-encodes its entity with the stored
// properties; it must not write over the encoded records of the other
// actions, which share one buffer (a regression: the actions after the
// merge were stored corrupt).
func TestTransactMergeKeepsOtherRecords(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, err := localtable.Open(&localtable.Options{Engine: eng.Open(t)})
		tabletest.Must(t, err)
		defer a.Close()
		tbl, err := a.CreateTable(ctx, "Txn")
		tabletest.Must(t, err)
		_, err = tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "b", Properties: wideProps("B", 20)})
		tabletest.Must(t, err)
		_, err = tbl.Transact(ctx, []localtable.Action{
			{Type: localtable.ActionUpsertReplace, Entity: localtable.Entity{PartitionKey: "p", RowKey: "a", Properties: counter(1)}},
			{Type: localtable.ActionUpsertMerge, Entity: localtable.Entity{PartitionKey: "p", RowKey: "b", Properties: counter(2)}},
			{Type: localtable.ActionUpsertReplace, Entity: localtable.Entity{PartitionKey: "p", RowKey: "c", Properties: counter(3)}},
		})
		tabletest.Must(t, err)
		checkTxnRows(t, tbl, true)
	})
}

// On a shared engine a transaction that loses a race is written again from
// the same encoded records: a merge before the retry must not have
// overwritten the other actions' records.
func TestTransactMergeRetryKeepsOtherRecords(t *testing.T) {
	s := sharedmem.New()
	a, b := openShared(t, s, nil), openShared(t, s, nil)
	tbl, err := a.CreateTable(ctx, "Txn")
	tabletest.Must(t, err)
	_, err = tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "b", Properties: wideProps("B", 20)})
	tabletest.Must(t, err)
	raced := false
	localtable.SetBeforeCommitHook(a, func(string, []localtable.Action) {
		if !raced {
			raced = true
			_, err := b.Table("Txn").Upsert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "b", Properties: wideProps("B", 20)}, nil)
			tabletest.Must(t, err)
		}
	})
	_, err = tbl.Transact(ctx, []localtable.Action{
		{Type: localtable.ActionUpsertReplace, Entity: localtable.Entity{PartitionKey: "p", RowKey: "a", Properties: counter(1)}},
		{Type: localtable.ActionUpsertMerge, Entity: localtable.Entity{PartitionKey: "p", RowKey: "b", Properties: counter(2)}},
	})
	tabletest.Must(t, err)
	if !raced {
		t.Fatal("the hook never ran: no race")
	}
	checkTxnRows(t, tbl, false)
}
