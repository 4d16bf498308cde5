package localtabletest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
)

// errCode is the status and error code of an SDK error.
func errCode(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return fmt.Sprint(re.StatusCode, " ", re.ErrorCode)
	}
	return fmt.Sprint(err)
}

// New serves its clients in-process: no network, the same wire (its
// ConnectionString, for code that makes its own client, names a loopback
// port serving the same server).
func ExampleNew() {
	t := &testing.T{} // in a real test, the *testing.T of the test
	srv := localtabletest.New(t)
	ctx := context.Background()

	orders := srv.Client.NewClient("orders")
	orders.CreateTable(ctx, nil)
	_, err := orders.AddEntity(ctx, []byte(`{"PartitionKey":"alice","RowKey":"001","Total":12.5}`), nil)
	fmt.Println(srv.URL, err)
	_, err = orders.AddEntity(ctx, []byte(`{"PartitionKey":"alice","RowKey":"001"}`), nil)
	fmt.Println(errCode(err))
	// Output:
	// https://localtable.test/devstoreaccount1 <nil>
	// 409 EntityAlreadyExists
}

// A fault rule answers matching requests as the service would; the
// request log shows what each got.
func ExampleServer_Inject() {
	t := &testing.T{}
	srv := localtabletest.New(t)
	ctx := context.Background()
	orders := srv.Client.NewClient("orders")
	orders.CreateTable(ctx, nil)

	// The next two inserts into orders are 503 ServerBusy; the SDK
	// retries (without waiting, in tests) and the third attempt passes.
	srv.Inject(localtabletest.Rule{
		Ops:    []localtabletest.Operation{localtabletest.OpInsert},
		Table:  "orders",
		Times:  2,
		Action: localtabletest.ServerBusy(),
	})
	_, err := orders.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"1"}`), nil)
	fmt.Println(err)
	fmt.Print(srv.Log())
	// Output:
	// <nil>
	// #1 CreateTable orders → 201
	// #2 InsertEntity orders (p, 1) → 503 ServerBusy [503 ServerBusy]
	// #3 InsertEntity orders (p, 1) → 503 ServerBusy [503 ServerBusy]
	// #4 InsertEntity orders (p, 1) → 201
}

// WithClientOptions chooses the clients' retry behaviour: here none, so
// the fault reaches the caller.
func ExampleWithClientOptions() {
	t := &testing.T{}
	srv := localtabletest.New(t, localtabletest.WithClientOptions(func(o *aztables.ClientOptions) {
		o.Retry.MaxRetries = -1
	}))
	srv.Inject(localtabletest.Rule{Action: localtabletest.ServerBusy()})
	_, err := srv.Client.CreateTable(context.Background(), "orders", nil)
	fmt.Println(errCode(err), len(srv.Log()))
	// Output: 503 ServerBusy 1
}

// WithPaging makes the server page as the real service may: tiny pages,
// an empty first page, pages that end with their partition. The SDK's
// pager follows every continuation.
func ExampleWithPaging() {
	t := &testing.T{}
	srv := localtabletest.New(t, localtabletest.WithPaging(localtabletest.Paging{
		MaxPageSize:         2,
		EmptyFirstPage:      true,
		PartitionBoundaries: true,
	}))
	srv.Seed(t, "orders",
		`{"PartitionKey":"alice","RowKey":"1"}`, `{"PartitionKey":"alice","RowKey":"2"}`,
		`{"PartitionKey":"alice","RowKey":"3"}`, `{"PartitionKey":"bob","RowKey":"1"}`)
	pager := srv.Client.NewClient("orders").NewListEntitiesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%d entities, NextRowKey sent: %v\n", len(page.Entities), page.NextRowKey != nil)
	}
	// Output:
	// 0 entities, NextRowKey sent: false
	// 2 entities, NextRowKey sent: true
	// 1 entities, NextRowKey sent: false
	// 1 entities, NextRowKey sent: false
}

// A manual clock times Timestamps, SAS expiry and request dates; the
// test moves it instead of sleeping.
func ExampleClock() {
	t := &testing.T{}
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	srv := localtabletest.New(t, localtabletest.WithTime(start))
	ctx := context.Background()
	orders := srv.Client.NewClient("orders")
	orders.CreateTable(ctx, nil)
	orders.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"1"}`), nil)

	sasURL, _ := orders.GetTableSASURL(aztables.SASPermissions{Read: true}, start, start.Add(time.Hour))
	reader, _ := aztables.NewClientWithNoCredential(sasURL, srv.ClientOptions())
	_, err := reader.GetEntity(ctx, "p", "1", nil)
	fmt.Println("within the hour:", err)

	srv.Clock.Advance(61 * time.Minute)
	_, err = reader.GetEntity(ctx, "p", "1", nil)
	fmt.Println("an hour later:", errCode(err))
	e, _ := srv.Account.Table("orders").Get(ctx, "p", "1", nil)
	fmt.Println("Timestamp:", e.Timestamp)
	// Output:
	// within the hour: <nil>
	// an hour later: 403 AuthenticationFailed
	// Timestamp: 2030-01-01 00:00:00 +0000 UTC
}

// Seed fills a table from Go values or JSON; Dump lists it for a failure
// message, one entity per line.
func ExampleServer_Seed() {
	t := &testing.T{}
	srv := localtabletest.New(t)
	type order struct {
		Customer string `table:"PartitionKey"`
		ID       string `table:"RowKey"`
		Total    float64
	}
	srv.Seed(t, "orders",
		order{Customer: "alice", ID: "001", Total: 12.5},
		map[string]any{"PartitionKey": "bob", "RowKey": "001", "Items": 3},
		`{"PartitionKey":"carol","RowKey":"001","Points@odata.type":"Edm.Int64","Points":"42"}`,
	)
	fmt.Print(srv.Dump(t, "orders"))
	// Output:
	// {"PartitionKey":"alice","RowKey":"001","Total":12.5}
	// {"PartitionKey":"bob","RowKey":"001","Items":3}
	// {"PartitionKey":"carol","RowKey":"001","Points@odata.type":"Edm.Int64","Points":"42"}
}

// SeedJSONL reads the service's JSON entity format, one entity a line,
// such as a file under testdata (SeedFile).
func ExampleServer_SeedJSONL() {
	t := &testing.T{}
	srv := localtabletest.New(t)
	srv.SeedJSONL(t, "orders", strings.NewReader(`
{"PartitionKey":"alice","RowKey":"001","Placed@odata.type":"Edm.DateTime","Placed":"2024-03-01T10:00:00Z"}
{"PartitionKey":"alice","RowKey":"002","Total":7.0}
`))
	for _, e := range srv.Entities(t, "orders") {
		for name, v := range e.Properties {
			fmt.Println(e.RowKey, name, v.Kind(), v)
		}
	}
	// Output:
	// 001 Placed Edm.DateTime 2024-03-01T10:00:00Z
	// 002 Total Edm.Double 7
}

// Snapshot saves the fixture once; Restore returns to it before each
// subtest, in O(1) on the in-memory engine.
func ExampleServer_Snapshot() {
	t := &testing.T{}
	srv := localtabletest.New(t)
	srv.Seed(t, "orders", `{"PartitionKey":"p","RowKey":"1"}`)
	fixture := srv.Snapshot(t)
	orders := srv.Client.NewClient("orders")
	for i := range 2 {
		srv.Restore(t, fixture)
		orders.AddEntity(context.Background(), []byte(`{"PartitionKey":"p","RowKey":"2"}`), nil)
		fmt.Println("run", i, "sees", len(srv.Entities(t, "orders")), "entities")
	}
	srv.Reset(t)
	_, err := srv.Account.GetTable(context.Background(), "orders")
	fmt.Println("after Reset:", err != nil)
	// Output:
	// run 0 sees 2 entities
	// run 1 sees 2 entities
	// after Reset: true
}

// AssertTable compares a table with what it should hold, by keys,
// property types and values, and prints a go-cmp diff when they differ.
func ExampleServer_AssertTable() {
	t := &testing.T{}
	srv := localtabletest.New(t)
	orders := srv.Client.NewClient("orders")
	orders.CreateTable(context.Background(), nil)
	orders.AddEntity(context.Background(), []byte(`{"PartitionKey":"p","RowKey":"1","Qty":2}`), nil)
	srv.AssertTable(t, "orders", map[string]any{"PartitionKey": "p", "RowKey": "1", "Qty": 2})
	fmt.Println("failed:", t.Failed())
	// Output: failed: false
}

// WithDeleteTableDelay plays the service's TableBeingDeleted: a deleted
// table cannot be created again until the clock has moved on.
func ExampleWithDeleteTableDelay() {
	t := &testing.T{}
	srv := localtabletest.New(t, localtabletest.WithDeleteTableDelay(40*time.Second))
	ctx := context.Background()
	srv.Client.CreateTable(ctx, "orders", nil)
	srv.Client.DeleteTable(ctx, "orders", nil)
	_, err := srv.Client.CreateTable(ctx, "orders", nil)
	fmt.Println(errCode(err))
	srv.Clock.Advance(40 * time.Second)
	_, err = srv.Client.CreateTable(ctx, "orders", nil)
	fmt.Println(err)
	// Output:
	// 409 TableBeingDeleted
	// <nil>
}

// WithThrottle answers 503 ServerBusy above a request rate, measured by
// the server's clock.
func ExampleWithThrottle() {
	t := &testing.T{}
	srv := localtabletest.New(t,
		localtabletest.WithTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)),
		localtabletest.WithThrottle(localtabletest.Throttle{Rate: 1}),
		localtabletest.WithClientOptions(func(o *aztables.ClientOptions) { o.Retry.MaxRetries = -1 }))
	ctx := context.Background()
	_, err := srv.Client.CreateTable(ctx, "orders", nil)
	fmt.Println(err)
	_, err = srv.Client.CreateTable(ctx, "others", nil)
	fmt.Println(errCode(err))
	srv.Clock.Advance(time.Second)
	_, err = srv.Client.CreateTable(ctx, "others", nil)
	fmt.Println(err)
	// Output:
	// <nil>
	// 503 ServerBusy
	// <nil>
}

// WithLatency delays operations. On a manual clock a delayed request
// waits for the test to advance the clock, so a test of a client timeout
// takes no real time.
func ExampleWithLatency() {
	t := &testing.T{}
	srv := localtabletest.New(t,
		localtabletest.WithTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)),
		localtabletest.WithLatency(localtabletest.Fixed(10*time.Second), localtabletest.OpQuery),
		localtabletest.WithClientOptions(func(o *aztables.ClientOptions) { o.Retry.MaxRetries = -1 }))
	srv.Seed(t, "orders", `{"PartitionKey":"p","RowKey":"1"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := srv.Client.NewClient("orders").NewListEntitiesPager(nil).NextPage(ctx)
	fmt.Println(errors.Is(err, context.DeadlineExceeded), srv.Log()[0].Delay)
	// Output: true 10s
}
