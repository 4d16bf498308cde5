package localtabletest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
)

// wantCode fails unless err is an *azcore.ResponseError with the status
// and error code.
func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("got %v, want %d %s", err, status, code)
	}
}

func addEntity(t *testing.T, c *aztables.Client, pk, rk string) {
	t.Helper()
	if _, err := c.AddEntity(context.Background(), []byte(`{"PartitionKey":"`+pk+`","RowKey":"`+rk+`"}`), nil); err != nil {
		t.Fatalf("AddEntity(%s, %s): %v", pk, rk, err)
	}
}

// New serves the SDK in-process: every operation works through the
// Transport, the server sees HTTPS (bearer tokens work), and nothing
// listens.
func TestNewInProcess(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.New(t)
	if srv.HTTP != nil || srv.Transport == nil || srv.URL != "https://localtable.test/devstoreaccount1" {
		t.Fatalf("New: HTTP %v, Transport %v, URL %q", srv.HTTP, srv.Transport, srv.URL)
	}
	orders := srv.Client.NewClient("orders")
	if _, err := orders.CreateTable(ctx, nil); err != nil {
		t.Fatal(err)
	}
	addEntity(t, orders, "p", "r")
	if _, err := orders.GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatal(err)
	}
	_, err := orders.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
	wantCode(t, err, 409, "EntityAlreadyExists")
	if _, err := orders.SubmitTransaction(ctx, []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p","RowKey":"b1"}`)},
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p","RowKey":"b2"}`)},
	}, nil); err != nil {
		t.Fatalf("SubmitTransaction: %v", err)
	}
	pager := orders.NewListEntitiesPager(nil)
	n := 0
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Entities)
	}
	if n != 3 {
		t.Fatalf("listed %d entities, want 3", n)
	}

	// A token credential works: the in-process server sees HTTPS.
	tc, err := aztables.NewServiceClient(srv.ServiceURL, srv.TokenCredential(), srv.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tc.NewClient("orders").GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("token credential: %v", err)
	}
	// The secondary endpoint and the connection string work too.
	if _, err := srv.SecondaryClient.NewClient("orders").GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("secondary: %v", err)
	}
	cs, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString, srv.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NewClient("orders").GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("connection string: %v", err)
	}
}

// The Transport serves only the fake host, as an http.RoundTripper too,
// and gives up when the request's context does.
func TestTransport(t *testing.T) {
	srv := localtabletest.New(t)
	hc := &http.Client{Transport: srv.Transport}
	resp, err := hc.Get("https://localtable.test/-/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %v", resp, err)
	}
	resp.Body.Close()
	for _, u := range []string{"https://example.com/devstoreaccount1/Tables", "http://localtable.test/devstoreaccount1/Tables"} {
		if _, err := hc.Get(u); err == nil || !strings.Contains(err.Error(), "serves https://localtable.test") {
			t.Errorf("GET %s: %v", u, err)
		}
	}
	srv.Inject(localtabletest.Rule{Action: localtabletest.Timeout()})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://localtable.test/-/health", nil)
	if _, err := hc.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a hung request: %v, want DeadlineExceeded", err)
	}
}

// The clients retry as the SDK does, without waiting: three 503s and a
// success take no real time. WithClientOptions changes the retries and
// can wrap the transport.
func TestClientOptions(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.New(t)
	srv.Inject(localtabletest.Rule{Times: 3, Action: localtabletest.ServerBusy()})
	t0 := time.Now()
	if _, err := srv.Client.CreateTable(ctx, "orders", nil); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el > time.Second || len(srv.Log()) != 4 {
		t.Fatalf("3 retries took %v (the SDK's default waits 3.3 s); log:\n%s", el, srv.Log())
	}

	var seen int
	srv = localtabletest.New(t, localtabletest.WithClientOptions(func(o *aztables.ClientOptions) {
		o.Retry.MaxRetries = -1
		o.Transport = countingTransport{o.Transport, &seen}
	}))
	srv.Inject(localtabletest.Rule{Times: 1, Action: localtabletest.ServerBusy()})
	_, err := srv.Client.CreateTable(ctx, "orders", nil)
	wantCode(t, err, 503, "ServerBusy")
	if seen != 1 || len(srv.Log()) != 1 {
		t.Fatalf("wrapped transport saw %d requests, log %d", seen, len(srv.Log()))
	}
}

type countingTransport struct {
	next interface {
		Do(*http.Request) (*http.Response, error)
	}
	n *int
}

func (c countingTransport) Do(r *http.Request) (*http.Response, error) {
	*c.n++
	return c.next.Do(r)
}

// Code that makes its own client from New's connection string, with the
// SDK's own transport and retries (no ClientOptions), reaches the same
// server: the connection string names a loopback port serving it.
func TestNewConnectionStringForOwnClients(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.New(t)
	if _, err := srv.Client.NewClient("orders").CreateTable(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ownClient := func(connStr string) *aztables.Client {
		// As code under test does: nothing of the test kit.
		svc, err := aztables.NewServiceClientFromConnectionString(connStr, nil)
		if err != nil {
			t.Fatal(err)
		}
		return svc.NewClient("orders")
	}
	b, _ := json.Marshal(map[string]string{"PartitionKey": "p", "RowKey": "own"})
	if _, err := ownClient(srv.ConnectionString).AddEntity(ctx, b, nil); err != nil {
		t.Fatalf("a client of its own, from ConnectionString: %v", err)
	}
	if _, err := srv.Account.Table("orders").Get(ctx, "p", "own", nil); err != nil {
		t.Fatalf("the write is not in the account: %v", err)
	}
	if _, err := ownClient(srv.SecondaryConnectionString).GetEntity(ctx, "p", "own", nil); err != nil {
		t.Fatalf("a client of its own, from SecondaryConnectionString: %v", err)
	}
	// Faults apply to it as to every client.
	f := srv.Inject(localtabletest.Rule{Ops: []localtabletest.Operation{localtabletest.OpGet}, Action: localtabletest.ConditionNotMet()})
	var re *azcore.ResponseError
	if _, err := ownClient(srv.ConnectionString).GetEntity(ctx, "p", "own", nil); !errors.As(err, &re) || re.ErrorCode != "UpdateConditionNotSatisfied" || f.Hits() != 1 {
		t.Fatalf("an injected fault: %v (%d hits)", err, f.Hits())
	}
}
