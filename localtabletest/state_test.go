package localtabletest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	lt "github.com/localtable/localtable/localtabletest"
)

type order struct {
	Customer string `table:"PartitionKey"`
	ID       string `table:"RowKey"`
	Total    float64
	Points   int64
}

// Seed takes every kind of Go value; Dump lists them as JSONL in key
// order, typed by annotations, without Timestamps.
func TestSeedAndDump(t *testing.T) {
	srv := lt.New(t)
	srv.Seed(t, "orders",
		localtable.Entity{PartitionKey: "a", RowKey: "1", Properties: localtable.Properties{"N": localtable.Int32Value(1)}},
		&localtable.Entity{PartitionKey: "a", RowKey: "2"},
		`{"PartitionKey":"b","RowKey":"1","Big@odata.type":"Edm.Int64","Big":"5"}`,
		[]byte(`{"PartitionKey":"b","RowKey":"2","D":2.0}`),
		map[string]any{"PartitionKey": "c", "RowKey": "1", "S": "x", "B": true},
		aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "c", RowKey: "2"}, Properties: map[string]any{"I": aztables.EDMInt64(7)}},
		order{Customer: "d", ID: "1", Total: 3, Points: 10},
		&order{Customer: "d", ID: "2"},
	)
	want := `{"PartitionKey":"a","RowKey":"1","N":1}
{"PartitionKey":"a","RowKey":"2"}
{"PartitionKey":"b","RowKey":"1","Big@odata.type":"Edm.Int64","Big":"5"}
{"PartitionKey":"b","RowKey":"2","D":2.0}
{"PartitionKey":"c","RowKey":"1","B":true,"S":"x"}
{"PartitionKey":"c","RowKey":"2","I@odata.type":"Edm.Int64","I":"7"}
{"PartitionKey":"d","RowKey":"1","Points@odata.type":"Edm.Int64","Points":"10","Total":3.0}
{"PartitionKey":"d","RowKey":"2","Points@odata.type":"Edm.Int64","Points":"0","Total":0.0}
`
	if got := srv.Dump(t, "orders"); got != want {
		t.Fatalf("Dump:\n%s\nwant:\n%s", got, want)
	}
	// The Dump seeds another table with the same contents.
	srv.SeedJSONL(t, "copy", strings.NewReader(srv.Dump(t, "orders")))
	if got := srv.Dump(t, "copy"); got != want {
		t.Fatalf("Dump of the copy:\n%s", got)
	}
	// Seeded entities are visible through the SDK, with their types.
	resp, err := srv.Client.NewClient("orders").GetEntity(context.Background(), "b", "1", nil)
	if err != nil || !strings.Contains(string(resp.Value), `"Big":"5","Big@odata.type":"Edm.Int64"`) {
		t.Fatalf("GetEntity: %s %v", resp.Value, err)
	}
	// Seeding bypasses the log and the faults.
	if n := len(srv.Log()); n != 1 {
		t.Fatalf("%d requests logged", n)
	}
}

func TestSeedFile(t *testing.T) {
	srv := lt.New(t)
	srv.SeedFile(t, "orders", "testdata/orders.jsonl")
	es := srv.Entities(t, "orders")
	if len(es) != 3 || es[2].Properties["Points"].Int64() != 9007199254740993 ||
		!es[0].Properties["Placed"].Time().Equal(time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)) ||
		es[1].Properties["Total"].Kind() != localtable.KindDouble {
		t.Fatalf("entities: %+v", es)
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
	panic(r)
}

func TestAssertTable(t *testing.T) {
	srv := lt.New(t)
	srv.Seed(t, "orders", `{"PartitionKey":"p","RowKey":"1","N":1}`, `{"PartitionKey":"p","RowKey":"2","N":2}`)
	// Any order, any form; Timestamps are not compared.
	srv.AssertTable(t, "orders",
		map[string]any{"PartitionKey": "p", "RowKey": "2", "N": 2},
		localtable.Entity{PartitionKey: "p", RowKey: "1", Properties: localtable.Properties{"N": localtable.Int32Value(1)}})

	rec := &recorder{TB: t}
	srv.AssertTable(rec, "orders",
		`{"PartitionKey":"p","RowKey":"1","N":1}`,
		`{"PartitionKey":"p","RowKey":"2","N@odata.type":"Edm.Int64","N":"2"}`, // the type differs
		`{"PartitionKey":"p","RowKey":"3"}`)                                    // missing
	if len(rec.msgs) != 1 {
		t.Fatalf("AssertTable reported %q", rec.msgs)
	}
	msg := rec.msgs[0]
	// go-cmp's output varies its spacing on purpose: look for the parts.
	for _, want := range []string{"table orders differs (-want +got)", `"Edm.Int64 2"`, `"Edm.Int32 2"`, `"(p, 3)"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("the diff lacks %s:\n%s", want, msg)
		}
	}
}

// Snapshot and Restore between subtests: each starts from the fixture,
// with the fixture's ETags; Reset empties the account.
func TestSnapshotRestore(t *testing.T) {
	ctx := context.Background()
	srv := lt.New(t)
	srv.Seed(t, "orders", `{"PartitionKey":"p","RowKey":"1","N":1}`)
	fixture := srv.Entities(t, "orders")[0]
	snap := srv.Snapshot(t)
	c := srv.Client.NewClient("orders")
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			srv.Restore(t, snap)
			srv.AssertTable(t, "orders", `{"PartitionKey":"p","RowKey":"1","N":1}`)
			etag := azETag(fixture.ETag)
			// The fixture's ETag matches again after every Restore.
			if _, err := c.UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"1","N":9}`), &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace}); err != nil {
				t.Fatalf("update with the fixture's ETag: %v", err)
			}
			addEntity(t, c, "p", fmt.Sprint("new", i))
			srv.Client.CreateTable(ctx, "scratch", nil)
		})
	}
	srv.Reset(t)
	if p, err := srv.Account.ListTables(ctx, nil); err != nil || len(p.Tables) != 0 {
		t.Fatalf("after Reset: %v %v", p.Tables, err)
	}
}

func azETag(e localtable.ETag) azcore.ETag { return azcore.ETag(e) }

// Reset keeps the service properties, though they are stored with the data.
func TestResetKeepsServiceProperties(t *testing.T) {
	srv := lt.New(t)
	props := []byte("<StorageServiceProperties><Cors/></StorageServiceProperties>")
	if err := srv.Account.SetServiceProperties(context.Background(), props); err != nil {
		t.Fatal(err)
	}
	srv.Reset(t)
	if got, err := srv.Account.ServiceProperties(context.Background()); err != nil || string(got) != string(props) {
		t.Fatalf("after Reset: %q, %v", got, err)
	}
}
