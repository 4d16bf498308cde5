package cli

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		method, target string
		header         map[string]string
		op, table      string
	}{
		{"GET", "/-/health", nil, "Health", ""},
		{"GET", "/", nil, "Explorer", ""},
		{"GET", "/-/explorer/a/x/", nil, "Explorer", ""},
		{"GET", "/-/admin/backup?account=a", nil, "Admin:backup", ""},
		{"OPTIONS", "/devstoreaccount1/Orders", nil, "Preflight", ""},
		{"GET", "/devstoreaccount1/?restype=service&comp=properties", nil, "GetTableServiceProperties", ""},
		{"PUT", "/devstoreaccount1/?restype=service&comp=properties", nil, "SetTableServiceProperties", ""},
		{"GET", "/devstoreaccount1-secondary/?restype=service&comp=stats", nil, "GetTableServiceStats", ""},
		{"POST", "/devstoreaccount1/Tables", nil, "CreateTable", ""},
		{"GET", "/devstoreaccount1/Tables()", nil, "QueryTables", ""},
		{"DELETE", "/devstoreaccount1/Tables('Orders')", nil, "DeleteTable", "Orders"},
		{"POST", "/devstoreaccount1/$batch", nil, "EntityGroupTransaction", ""},
		{"GET", "/devstoreaccount1/Orders?comp=acl", nil, "GetTableACL", "Orders"},
		{"PUT", "/devstoreaccount1/Orders?comp=acl", nil, "SetTableACL", "Orders"},
		{"POST", "/devstoreaccount1/Orders", nil, "InsertEntity", "Orders"},
		{"GET", "/devstoreaccount1/Orders()", nil, "QueryEntities", "Orders"},
		{"GET", "/devstoreaccount1/Orders(PartitionKey='a',RowKey='b')", nil, "QueryEntity", "Orders"},
		{"PUT", "/devstoreaccount1/Orders(PartitionKey='a',RowKey='b')", nil, "InsertOrReplaceEntity", "Orders"},
		{"PUT", "/devstoreaccount1/Orders(PartitionKey='a',RowKey='b')", map[string]string{"If-Match": "*"}, "UpdateEntity", "Orders"},
		{"MERGE", "/devstoreaccount1/Orders(PartitionKey='a',RowKey='b')", nil, "InsertOrMergeEntity", "Orders"},
		{"POST", "/devstoreaccount1/Orders(PartitionKey='a',RowKey='b')", map[string]string{"X-HTTP-Method": "MERGE", "If-Match": "*"}, "MergeEntity", "Orders"},
		{"DELETE", "/devstoreaccount1/Orders(PartitionKey='a',RowKey='b')", nil, "DeleteEntity", "Orders"},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		for k, v := range c.header {
			r.Header.Set(k, v)
		}
		op, table := classify(r)
		if op != c.op || table != c.table {
			t.Errorf("%s %s: %s %q, want %s %q", c.method, c.target, op, table, c.op, c.table)
		}
	}
}

func TestAdminSignature(t *testing.T) {
	key := []byte("secret")
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	req := func(account, sig string, date time.Time) *http.Request {
		r := httptest.NewRequest("GET", backupPath+"?account="+account, nil)
		d := date.Format(http.TimeFormat)
		r.Header.Set("X-Ms-Date", d)
		if sig == "" {
			sig = signAdmin(key, d, account, backupPath)
		}
		r.Header.Set("Authorization", "SharedKeyLite "+account+":"+sig)
		return r
	}
	if err := verifyAdminSignature(req("acct", "", now), "acct", key, now); err != nil {
		t.Fatalf("good signature: %v", err)
	}
	if err := verifyAdminSignature(req("acct", "AAAA", now), "acct", key, now); err == nil {
		t.Error("bad signature accepted")
	}
	if err := verifyAdminSignature(req("acct", "", now.Add(-16*time.Minute)), "acct", key, now); err == nil {
		t.Error("old date accepted")
	}
	if err := verifyAdminSignature(req("other", "", now), "acct", key, now); err == nil {
		t.Error("another account's name accepted")
	}
}

// TestClassifySecondary: the request log reads the secondary endpoint's
// paths as the server routes them, the Python SDK's doubled form too.
func TestClassifySecondary(t *testing.T) {
	for target, want := range map[string]string{
		"/devstoreaccount1-secondary/Orders()":                                             "QueryEntities",
		"/devstoreaccount1-secondary/devstoreaccount1/Orders()":                            "QueryEntities",
		"/devstoreaccount1-secondary/devstoreaccount1/Orders(PartitionKey='a',RowKey='b')": "QueryEntity",
	} {
		if op, table := classify(httptest.NewRequest("GET", target, nil)); op != want || table != "Orders" {
			t.Errorf("GET %s: %s %q, want %s \"Orders\"", target, op, table, want)
		}
	}
}

// TestLogQueryPlan: the request line of a query says whether it read an
// index (plan=index index=NAME) or scanned (plan=scan), and what it read
// (scanned=N), from the server's X-Localtable-Index and
// X-Localtable-Scanned headers; other requests carry neither.
func TestLogQueryPlan(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	srv := localtabletest.New(t, localtabletest.WithMiddleware(func(h http.Handler) http.Handler { return logRequests(log, h) }))
	ctx := context.Background()
	tbl, err := srv.Account.CreateTable(ctx, "Orders")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%02d", i), Properties: localtable.Properties{"Total": localtable.Int32Value(int32(i))}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.CreateIndex(ctx, "ByTotal", "Total"); err != nil {
		t.Fatal(err)
	}
	client := srv.Client.NewClient("Orders")
	for _, f := range []string{"Total eq 7", "PartitionKey eq 'p' and RowKey ge 'r25'"} {
		if _, err := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f}).NextPage(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.GetEntity(ctx, "p", "r01", nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("log:\n%s", buf.String())
	}
	for i, want := range []string{"op=QueryEntities table=Orders status=200 plan=index index=ByTotal scanned=1 ", "op=QueryEntities table=Orders status=200 plan=scan scanned=5 "} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d: %s\nwant it to hold %q", i, lines[i], want)
		}
	}
	if strings.Contains(lines[2], "plan=") || strings.Contains(lines[2], "scanned=") {
		t.Errorf("a point read's line: %s; want no plan", lines[2])
	}
}

// syncBuffer is a bytes.Buffer that a log handler may write from several
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogFailedTransaction: a transaction that fails answers 202 with its
// failure inside; its log line names the table, and the failed action's
// status, error code and index. A transaction that succeeds names the
// table and no error.
func TestLogFailedTransaction(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	srv := localtabletest.New(t, localtabletest.WithMiddleware(func(h http.Handler) http.Handler { return logRequests(log, h) }))
	ctx := context.Background()
	if _, err := srv.Account.CreateTable(ctx, "Orders"); err != nil {
		t.Fatal(err)
	}
	client := srv.Client.NewClient("Orders")
	insert := func(rk string) aztables.TransactionAction {
		return aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p","RowKey":"` + rk + `"}`)}
	}
	if _, err := client.SubmitTransaction(ctx, []aztables.TransactionAction{insert("a"), insert("b")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.SubmitTransaction(ctx, []aztables.TransactionAction{insert("c"), insert("a")}, nil); err == nil {
		t.Fatal("a transaction inserting an entity that exists succeeded")
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log:\n%s", buf.String())
	}
	if !strings.Contains(lines[0], "op=EntityGroupTransaction table=Orders status=202 dur=") {
		t.Errorf("the transaction that succeeded: %s", lines[0])
	}
	if want := "op=EntityGroupTransaction table=Orders status=202 error=EntityAlreadyExists failed_status=409 failed_action=1 "; !strings.Contains(lines[1], want) {
		t.Errorf("the transaction that failed: %s\nwant it to hold %q", lines[1], want)
	}
}
