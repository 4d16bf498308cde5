package localtabletest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	lt "github.com/localtable/localtable/localtabletest"
)

// A deleted table is "being deleted" for the configured time of the
// server's Clock: creating it again, or touching its entities, is 409
// TableBeingDeleted until the clock passes it.
func TestQuirkTableBeingDeleted(t *testing.T) {
	ctx := context.Background()
	srv := lt.New(t, lt.WithTime(time.Unix(1e9, 0)), lt.WithDeleteTableDelay(40*time.Second))
	c := srv.Client.NewClient("orders")
	if _, err := c.CreateTable(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateTable(ctx, nil)
	wantCode(t, err, 409, "TableBeingDeleted")
	_, err = srv.Client.CreateTable(ctx, "ORDERS", nil) // names are case-insensitive
	wantCode(t, err, 409, "TableBeingDeleted")
	_, err = c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
	wantCode(t, err, 409, "TableBeingDeleted")
	if _, err := srv.Client.CreateTable(ctx, "others", nil); err != nil {
		t.Fatalf("another table: %v", err)
	}
	srv.Clock.Advance(39 * time.Second)
	_, err = c.CreateTable(ctx, nil)
	wantCode(t, err, 409, "TableBeingDeleted")
	srv.Clock.Advance(time.Second)
	if _, err := c.CreateTable(ctx, nil); err != nil {
		t.Fatalf("after the delay: %v", err)
	}
	if got := srv.Log().Faulted().String(); got == "" {
		t.Fatal("the quirk is not in the log")
	}

	// Off by default: the table is created again at once.
	plain := lt.New(t)
	pc := plain.Client.NewClient("orders")
	pc.CreateTable(ctx, nil)
	pc.Delete(ctx, nil)
	if _, err := pc.CreateTable(ctx, nil); err != nil {
		t.Fatalf("without the quirk: %v", err)
	}
}

// Over the rate, requests are 503 ServerBusy and not served; the bucket
// refills by the server's Clock.
func TestQuirkThrottle(t *testing.T) {
	ctx := context.Background()
	srv := lt.New(t, lt.WithTime(time.Unix(1e9, 0)), lt.WithThrottle(lt.Throttle{Rate: 2}), noRetries)
	c := srv.Client.NewClient("orders")
	if _, err := c.CreateTable(ctx, nil); err != nil {
		t.Fatal(err)
	}
	addEntity(t, c, "p", "1")
	_, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"2"}`), nil)
	wantCode(t, err, 503, "ServerBusy")
	if _, err := c.GetEntity(ctx, "p", "2", nil); err == nil {
		t.Fatal("a throttled insert was applied") // this Get is itself throttled or 404
	}
	srv.Clock.Advance(500 * time.Millisecond) // one token
	addEntity(t, c, "p", "2")
	_, err = c.GetEntity(ctx, "p", "2", nil)
	wantCode(t, err, 503, "ServerBusy")

	// Per partition: each partition has its own bucket; a query is not
	// limited.
	pp := lt.New(t, lt.WithTime(time.Unix(1e9, 0)), lt.WithThrottle(lt.Throttle{Rate: 1, PerPartition: true}), noRetries)
	pc := pp.Client.NewClient("orders")
	pc.CreateTable(ctx, nil)
	addEntity(t, pc, "a", "1")
	addEntity(t, pc, "b", "1")
	_, err = pc.AddEntity(ctx, []byte(`{"PartitionKey":"a","RowKey":"2"}`), nil)
	wantCode(t, err, 503, "ServerBusy")
	for range 3 {
		if _, err := pc.NewListEntitiesPager(nil).NextPage(ctx); err != nil {
			t.Fatalf("query under a partition throttle: %v", err)
		}
	}
	_, err = pc.SubmitTransaction(ctx, []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"b","RowKey":"2"}`)}}, nil)
	wantCode(t, err, 503, "ServerBusy")
}

// The account and partition throttles answer with the service's two
// ServerBusy messages.
func TestQuirkThrottleMessages(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		th   lt.Throttle
		want string
	}{
		{lt.Throttle{Rate: 1}, "Operations per second is over the account limit."},
		{lt.Throttle{Rate: 1, PerPartition: true}, "The server is currently unable to receive requests. Please retry your request."},
	} {
		srv := lt.New(t, lt.WithTime(time.Unix(1e9, 0)), lt.WithThrottle(c.th), noRetries)
		srv.Seed(t, "orders")
		tc := srv.Client.NewClient("orders")
		addEntity(t, tc, "p", "1")
		_, err := tc.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"2"}`), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c.th, err)
		}
	}
}
