package localtabletest_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	lt "github.com/localtable/localtable/localtabletest"
)

// noRetries makes the server's clients try once.
var noRetries = lt.WithClientOptions(func(o *aztables.ClientOptions) { o.Retry.MaxRetries = -1 })

func newOrders(t *testing.T, opts ...lt.Option) (*lt.Server, *aztables.Client) {
	t.Helper()
	srv := lt.New(t, opts...)
	c := srv.Client.NewClient("orders")
	if _, err := c.CreateTable(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	srv.ResetLog()
	return srv, c
}

// A service error reaches the client as the service sends it: status,
// code, and the body format of the operation (JSON for entities, XML for
// an ACL).
func TestFaultFail(t *testing.T) {
	ctx := context.Background()
	srv, c := newOrders(t, noRetries)
	f := srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpInsert}, Action: lt.ServerBusy()})
	_, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
	wantCode(t, err, 503, "ServerBusy")
	var re *azcore.ResponseError
	errors.As(err, &re)
	body, _ := io.ReadAll(re.RawResponse.Body)
	if !strings.HasPrefix(string(body), `{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"The server is currently unable to receive requests. Please retry your request.\nRequestId:`) ||
		re.RawResponse.Header.Get("x-ms-request-id") == "" {
		t.Fatalf("503 body %s, headers %v", body, re.RawResponse.Header)
	}
	// The insert was not applied; other operations pass.
	if _, err := c.GetEntity(ctx, "p", "r", nil); err == nil {
		t.Fatal("a failed insert was applied")
	}
	srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpGetACL}, Action: lt.InternalError()})
	_, err = c.GetAccessPolicy(ctx, nil)
	wantCode(t, err, 500, "InternalError")
	errors.As(err, &re)
	body, _ = io.ReadAll(re.RawResponse.Body)
	if !strings.HasPrefix(string(body), `<?xml version="1.0" encoding="utf-8"?><m:error xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><m:code>InternalError</m:code>`) {
		t.Fatalf("ACL error body %s", body)
	}
	if f.Hits() != 1 {
		t.Fatalf("Hits %d", f.Hits())
	}
	log := srv.Log()
	if got := log.String(); !strings.Contains(got, "#1 InsertEntity orders (p, r) → 503 ServerBusy [503 ServerBusy]\n") ||
		!strings.Contains(got, "GetTableACL orders → 500 InternalError [500 InternalError]") {
		t.Fatalf("log:\n%s", got)
	}
	if log[0].Applied || !log[1].Applied || log[1].Fault != "" {
		t.Fatalf("Applied/Fault: %+v", log[:2])
	}
}

// Matchers, Skip, Times, Remove and the order of rules.
func TestFaultMatching(t *testing.T) {
	ctx := context.Background()
	srv, c := newOrders(t, noRetries)
	other := srv.Client.NewClient("other")
	other.CreateTable(ctx, nil)
	srv.ResetLog()
	srv.Inject(lt.Rule{Name: "pk", Table: "ORDERS", PartitionKey: "hot", Action: lt.ServerBusy()})
	srv.Inject(lt.Rule{Name: "row", When: func(r *lt.Request) bool { return r.RowKey == "x" }, Action: lt.Fail(409, "Custom", "custom")})
	skip := srv.Inject(lt.Rule{Name: "third", Ops: []lt.Operation{lt.OpUpsertReplace}, Skip: 2, Times: 1, Action: lt.InternalError()})
	byMethod := srv.Inject(lt.Rule{Name: "delete", Method: "DELETE", Action: lt.ConditionNotMet()})

	_, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"hot","RowKey":"1"}`), nil)
	wantCode(t, err, 503, "ServerBusy")
	addEntity(t, other, "hot", "1") // another table
	addEntity(t, c, "cold", "1")
	_, err = c.AddEntity(ctx, []byte(`{"PartitionKey":"cold","RowKey":"x"}`), nil)
	wantCode(t, err, 409, "Custom")
	for i := range 4 {
		_, err := c.UpsertEntity(ctx, []byte(`{"PartitionKey":"cold","RowKey":"u"}`), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
		if i == 2 {
			wantCode(t, err, 500, "InternalError")
		} else if err != nil {
			t.Fatalf("upsert %d: %v", i, err)
		}
	}
	if skip.Hits() != 1 {
		t.Fatalf("Skip/Times rule hit %d times", skip.Hits())
	}
	_, err = c.DeleteEntity(ctx, "cold", "1", nil)
	wantCode(t, err, 412, "UpdateConditionNotSatisfied")
	byMethod.Remove()
	if _, err := c.DeleteEntity(ctx, "cold", "1", nil); err != nil {
		t.Fatalf("after Remove: %v", err)
	}
	srv.ClearFaults()
	addEntity(t, c, "hot", "2")
	want := []string{"pk", "", "", "row", "", "", "third", "", "delete", "", ""}
	for i, r := range srv.Log() {
		if r.Fault != want[i] {
			t.Errorf("request %s: fault %q, want %q", r, r.Fault, want[i])
		}
	}
}

// Probability draws from the seeded source: the same seed acts on the
// same requests, another seed on others, and about p of them.
func TestFaultProbability(t *testing.T) {
	pattern := func(seed uint64) string {
		srv := lt.New(t, lt.WithSeed(seed), noRetries)
		srv.Inject(lt.Rule{Probability: 0.3, Action: lt.ServerBusy()})
		var b strings.Builder
		for range 200 {
			p := srv.Client.NewListTablesPager(nil)
			if _, err := p.NextPage(context.Background()); err != nil {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	a, b, c := pattern(7), pattern(7), pattern(8)
	if a != b {
		t.Fatalf("seed 7 gave two patterns:\n%s\n%s", a, b)
	}
	if a == c {
		t.Fatal("seeds 7 and 8 gave the same pattern")
	}
	if n := strings.Count(a, "x"); n < 30 || n > 90 {
		t.Fatalf("%d of 200 failed at p=0.3", n)
	}
}

// A dropped connection is a transport error, which the SDK retries; a
// body cut short fails the read, retried for a GET but not for a POST.
func TestFaultDropAndTruncate(t *testing.T) {
	ctx := context.Background()
	srv, c := newOrders(t)
	srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpGet}, Times: 2, Action: lt.DropConnection()})
	addEntity(t, c, "p", "r")
	if _, err := c.GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("GetEntity after two drops: %v", err)
	}
	gets := srv.Log().Op(lt.OpGet)
	if len(gets) != 3 || gets[0].Status != 0 || gets[1].Fault != "drop connection" || gets[2].Status != 200 {
		t.Fatalf("gets:\n%s", gets)
	}

	srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpGet}, Times: 1, Action: lt.TruncateBody(10)})
	if _, err := c.GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("GetEntity after a truncated body: %v", err)
	}
	srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpInsert}, Times: 1, Action: lt.TruncateBody(10)})
	_, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"t"}`), nil)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("AddEntity with a truncated body: %v, want io.ErrUnexpectedEOF", err)
	}
	// The insert was applied: the response was lost, not the write.
	if _, err := c.GetEntity(ctx, "p", "t", nil); err != nil {
		t.Fatalf("the truncated insert was not applied: %v", err)
	}
	if n := len(srv.Log().Op(lt.OpInsert)); n != 2 {
		t.Fatalf("%d inserts: the POST was retried", n)
	}
}

// A timeout hangs until the client gives up; the SDK's per-try timeout
// retries it.
func TestFaultTimeout(t *testing.T) {
	ctx := context.Background()
	srv, c := newOrders(t, lt.WithClientOptions(func(o *aztables.ClientOptions) { o.Retry.TryTimeout = 20 * time.Millisecond }))
	srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpQuery}, Times: 1, Action: lt.Timeout()})
	p := c.NewListEntitiesPager(nil)
	if _, err := p.NextPage(ctx); err != nil {
		t.Fatalf("query after a timeout: %v", err)
	}
	q := srv.Log().Op(lt.OpQuery)
	if len(q) != 2 || q[0].Status != 0 || q[0].Fault != "timeout" || q[1].Status != 200 {
		t.Fatalf("queries:\n%s", q)
	}
}

// After apply: the write happens, the client sees the failure, and the
// SDK's retry meets the write it already made.
func TestFaultAfterApply(t *testing.T) {
	ctx := context.Background()
	srv, c := newOrders(t)
	srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpInsert}, Times: 1, AfterApply: true, Action: lt.DropConnection()})
	_, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
	wantCode(t, err, 409, "EntityAlreadyExists")
	ins := srv.Log().Op(lt.OpInsert)
	if len(ins) != 2 || !ins[0].Applied || ins[0].Status != 0 || ins[1].ErrorCode != "EntityAlreadyExists" {
		t.Fatalf("inserts:\n%s", ins)
	}
	if !strings.Contains(ins.String(), "[drop connection after apply, applied]") {
		t.Fatalf("log:\n%s", ins)
	}

	// A 503 after apply: the batch is applied, the retry conflicts.
	srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpBatch}, Times: 1, AfterApply: true, Action: lt.ServerBusy()})
	_, err = c.SubmitTransaction(ctx, []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"b","RowKey":"1"}`)},
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"b","RowKey":"2"}`)},
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "EntityAlreadyExists") {
		t.Fatalf("retried batch: %v", err)
	}
	b := srv.Log().Op(lt.OpBatch)
	if len(b) != 2 || b[0].Status != 503 || !b[0].Applied || b[0].Table != "orders" || b[0].PartitionKey != "b" ||
		len(b[0].Batch) != 2 || b[0].Batch[1].Op != lt.OpInsert || b[0].Batch[1].RowKey != "2" {
		t.Fatalf("batches: %+v", b)
	}
	// Delay after apply answers late with the real response.
	srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpDelete}, Times: 1, AfterApply: true, Action: lt.Delay(time.Millisecond)})
	if _, err := c.DeleteEntity(ctx, "p", "r", nil); err != nil {
		t.Fatal(err)
	}
	if d := srv.Log().Op(lt.OpDelete); len(d) != 1 || d[0].Status != 204 || d[0].Delay != time.Millisecond {
		t.Fatalf("delete: %+v", d)
	}
}

// Faults apply over the network as in-process: NewServer drops the
// connection and truncates bodies with net/http.
func TestFaultsOverHTTP(t *testing.T) {
	ctx := context.Background()
	srv := lt.NewServer(t)
	c := srv.Client.NewClient("orders")
	c.CreateTable(ctx, nil)
	srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpInsert}, Times: 1, AfterApply: true, Action: lt.DropConnection()})
	_, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
	wantCode(t, err, 409, "EntityAlreadyExists")
	srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpGet}, Times: 1, Action: lt.TruncateBody(5)})
	resp, err := c.GetEntity(ctx, "p", "r", nil)
	if err != nil || len(resp.Value) == 0 {
		t.Fatalf("GetEntity after a truncated body over HTTP: %v", err)
	}
	if g := srv.Log().Op(lt.OpGet); len(g) != 2 || g[0].Fault == "" {
		t.Fatalf("gets:\n%s", g)
	}
	srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpInsert}, Times: 1, Action: lt.Timeout()})
	tctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if _, err := c.AddEntity(tctx, []byte(`{"PartitionKey":"p","RowKey":"s"}`), nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timeout over HTTP: %v", err)
	}
}

// A predicate may use the Server (the harness does not hold its lock
// while matching), and a removed rule acts no more.
func TestFaultWhenUsesServer(t *testing.T) {
	srv, c := newOrders(t, noRetries)
	f := srv.Inject(lt.Rule{
		When: func(r *lt.Request) bool {
			srv.SetLatency(nil)
			return len(srv.Log().Op(lt.OpInsert)) == 2 // the second insert
		},
		Action: lt.ServerBusy(),
	})
	addEntity(t, c, "p", "1")
	_, err := c.AddEntity(context.Background(), []byte(`{"PartitionKey":"p","RowKey":"2"}`), nil)
	wantCode(t, err, 503, "ServerBusy")
	srv.ClearFaults()
	addEntity(t, c, "p", "3")
	if f.Hits() != 1 {
		t.Fatalf("hits %d", f.Hits())
	}
}

// Fail with status 0 answers with the status the service gives the code;
// a status given is answered as it is, whatever the code.
func TestFaultFailStatusOfCode(t *testing.T) {
	ctx := context.Background()
	srv, c := newOrders(t, noRetries)
	a := lt.Fail(0, "TableBeingDeleted", "The specified table is being deleted.")
	if got := a.String(); got != "409 TableBeingDeleted" {
		t.Errorf("Fail(0, TableBeingDeleted) is %q", got)
	}
	srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpInsert}, Action: a, Times: 1})
	_, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
	wantCode(t, err, 409, "TableBeingDeleted")
	srv.Inject(lt.Rule{Ops: []lt.Operation{lt.OpInsert}, Action: lt.Fail(429, "TableBeingDeleted", "Slow down."), Times: 1})
	_, err = c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
	wantCode(t, err, 429, "TableBeingDeleted")
}
