package localtable_test

import (
	"context"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/keyenc"
)

func TestVerifyCleanAccount(t *testing.T) {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	tb, _ := acct.CreateTable(ctx, "Orders")
	acct.CreateTable(ctx, "Empty")
	for _, k := range [][2]string{{"a", "1"}, {"a", "2"}, {"b", "1"}} {
		if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: k[0], RowKey: k[1], Properties: localtable.Properties{"N": localtable.Int32Value(1)}}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := acct.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("%v %+v", err, rep)
	}
	if len(rep.Tables) != 2 || rep.Tables[0].Name != "Empty" || rep.Tables[1].Name != "Orders" || rep.Tables[1].Entities != 3 || rep.Tables[1].Partitions != 2 {
		t.Fatalf("%+v", rep.Tables)
	}
}

// Each corruption written under the data model is reported where it is.
func TestVerifyReportsCorruption(t *testing.T) {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	tb, _ := acct.CreateTable(ctx, "Orders") // table ID 1
	if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "a", RowKey: "1"}); err != nil {
		t.Fatal(err)
	}
	b := localtable.EngineOf(acct).NewBatch()
	b.Set(keyenc.AppendEntityKey(nil, 1, "a", "garbage"), []byte{0xff, 1, 2})
	b.Set(keyenc.AppendEntityKey(nil, 1, "a", "bad/key"), mustRecord(t, acct))
	b.Set(keyenc.AppendEntityKey(nil, 99, "x", "y"), []byte{1})
	b.Set(keyenc.CatalogKey("broken"), []byte{7})
	b.Set([]byte("zzz"), []byte{1})
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	b.Close()
	rep, err := acct.Verify(ctx)
	if err != nil || rep.OK() {
		t.Fatalf("%v %+v", err, rep)
	}
	var orders *localtable.TableReport
	for i := range rep.Tables {
		if rep.Tables[i].Name == "Orders" {
			orders = &rep.Tables[i]
		}
	}
	all := strings.Join(orders.Problems, "\n")
	for _, want := range []string{`("a", "garbage"): the record does not decode`, `("a", "bad/key") breaks a rule`} {
		if !strings.Contains(all, want) {
			t.Errorf("Orders' problems lack %q:\n%s", want, all)
		}
	}
	acctAll := strings.Join(rep.Problems, "\n")
	for _, want := range []string{`catalog record "broken" does not decode`, "table ID 99, which the catalog lacks", `unknown key "zzz"`} {
		if !strings.Contains(acctAll, want) {
			t.Errorf("account problems lack %q:\n%s", want, acctAll)
		}
	}
}

// mustRecord returns the stored record of entity (a, 1) of table ID 1.
func mustRecord(t *testing.T, acct *localtable.Account) []byte {
	t.Helper()
	v, c, err := localtable.EngineOf(acct).Get(keyenc.AppendEntityKey(nil, 1, "a", "1"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return append([]byte(nil), v...)
}

// A key in a form the encoder never writes (a character above U+FFFF as raw
// UTF-8) is reported by Verify and refused by queries: decoded, it would be
// an entity that Get and Delete cannot reach.
func TestVerifyReportsNonCanonicalKey(t *testing.T) {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	tb, _ := acct.CreateTable(ctx, "Orders") // table ID 1
	if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "a", RowKey: "1"}); err != nil {
		t.Fatal(err)
	}
	raw := keyenc.AppendString(keyenc.AppendTableID(nil, 1), "a")
	raw = append(raw, "\xf0\x90\x80\x80\x00\x01"...) // RowKey U+10000, not as S() writes it
	b := localtable.EngineOf(acct).NewBatch()
	b.Set(raw, mustRecord(t, acct))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	b.Close()
	rep, err := acct.Verify(ctx)
	if err != nil || rep.OK() {
		t.Fatalf("Verify: %v %+v", err, rep)
	}
	if all := strings.Join(rep.Tables[0].Problems, "\n"); !strings.Contains(all, "does not decode") {
		t.Errorf("Orders' problems: %s", all)
	}
	for e, err := range tb.QueryAll(ctx, nil) {
		if err == nil && e.RowKey != "1" {
			t.Errorf("query returned the entity of the non-canonical key %q", e.RowKey)
		}
	}
	f, err := filter.Parse("RowKey gt '2'")
	if err != nil {
		t.Fatal(err)
	}
	for e, err := range tb.QueryAll(ctx, &localtable.QueryOptions{Filter: f}) {
		if err == nil {
			t.Errorf("filtered query returned the entity of the non-canonical key %q", e.RowKey)
		}
	}
}
