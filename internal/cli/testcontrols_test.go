package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/server"
)

// controlClient calls serve's test controls (/ACCOUNT/$test) as a test
// suite in another language would: JSON over HTTP, signed with the
// account key (Shared Key Lite).
type controlClient struct {
	t    *testing.T
	base string // http://127.0.0.1:PORT
	key  []byte // nil: unsigned
}

// do sends a control and returns its status and body.
func (c controlClient) do(method, query string, body any) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	path := "/" + server.DevAccountName + "/$test"
	req, err := http.NewRequest(method, c.base+path+"?"+query, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2019-02-02")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != nil {
		comp := ""
		for _, kv := range strings.Split(query, "&") {
			if v, ok := strings.CutPrefix(kv, "comp="); ok {
				comp = "?comp=" + v
			}
		}
		toSign := date + "\n/" + server.DevAccountName + path + comp
		req.Header.Set("Authorization", "SharedKeyLite "+server.DevAccountName+":"+sign(c.key, toSign))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, b
}

// ok sends a control that must succeed and decodes its answer into out
// (if not nil).
func (c controlClient) ok(method, query string, body, out any) {
	c.t.Helper()
	status, b := c.do(method, query, body)
	if status != http.StatusOK && status != http.StatusNoContent {
		c.t.Fatalf("%s %s: %d %s", method, query, status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: %v: %s", method, query, err, b)
		}
	}
}

// serveControls runs serve --test-controls (and args) and returns a
// control client and an aztables service client of the account, whose
// retries do not wait.
func serveControls(t *testing.T, args ...string) (controlClient, *aztables.ServiceClient) {
	t.Helper()
	base := serveHTTPTest(t, append([]string{"--test-controls"}, args...)...)
	cred, err := aztables.NewSharedKeyCredential(server.DevAccountName, server.DevAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	opts := &aztables.ClientOptions{}
	opts.Retry.RetryDelay = time.Millisecond
	opts.Retry.MaxRetryDelay = 2 * time.Millisecond
	sc, err := aztables.NewServiceClientWithSharedKey(base+"/"+server.DevAccountName+"/", cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	return controlClient{t: t, base: base, key: testKey(t)}, sc
}

// addEntity inserts (pk, rk) into table, failing the test on error.
func addEntity(t *testing.T, tc *aztables.Client, pk, rk string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"PartitionKey": pk, "RowKey": rk, "N": 1})
	if _, err := tc.AddEntity(context.Background(), b, nil); err != nil {
		t.Fatalf("AddEntity(%s, %s): %v", pk, rk, err)
	}
}

// rowKeys lists table's RowKeys in order.
func rowKeys(t *testing.T, tc *aztables.Client) []string {
	t.Helper()
	var out []string
	p := tc.NewListEntitiesPager(nil)
	for p.More() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entities {
			var v struct{ RowKey string }
			json.Unmarshal(e, &v)
			out = append(out, v.RowKey)
		}
	}
	return out
}

// errorCode is the service error code of an SDK call's error.
func errorCode(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// TestTestControlsAuth: the test controls are off without
// --test-controls, and on need the account key: unsigned or wrongly
// signed requests are refused, as with --no-auth they are not.
func TestTestControlsAuth(t *testing.T) {
	off := controlClient{t: t, base: serveHTTPTest(t), key: testKey(t)}
	if status, b := off.do("GET", "comp=clock", nil); status != http.StatusNotFound || !strings.Contains(string(b), "ResourceNotFound") ||
		!strings.Contains(string(b), "The specified resource does not exist. The test controls ($test, a localtable extension) are off: start the server with --test-controls") {
		t.Errorf("without --test-controls: %d %s, want 404 ResourceNotFound, the service's message and the hint", status, b)
	}
	on, sc := serveControls(t)
	if status, _ := on.do("GET", "comp=clock", nil); status != http.StatusOK {
		t.Errorf("signed with the account key: %d, want 200", status)
	}
	sasURL, err := sc.NewClient("orders").GetTableSASURL(aztables.SASPermissions{Read: true, Add: true, Update: true, Delete: true},
		time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	sasAuth := on
	sasAuth.key = nil
	if status, b := sasAuth.do("GET", "comp=clock&"+sasURL[strings.IndexByte(sasURL, '?')+1:], nil); status != http.StatusForbidden || !strings.Contains(string(b), "AuthorizationFailure") {
		t.Errorf("with a SAS: %d %s, want 403 AuthorizationFailure", status, b)
	}
	unsigned := on
	unsigned.key = nil
	if status, b := unsigned.do("POST", "comp=reset", nil); status != http.StatusForbidden {
		t.Errorf("unsigned: %d %s, want 403", status, b)
	}
	wrong := on
	wrong.key = []byte("not the account key")
	if status, b := wrong.do("POST", "comp=reset", nil); status != http.StatusForbidden || !strings.Contains(string(b), "AuthenticationFailed") {
		t.Errorf("signed with another key: %d %s, want 403 AuthenticationFailed", status, b)
	}
	if status, b := on.do("GET", "comp=nothing", nil); status != http.StatusBadRequest {
		t.Errorf("an unknown control: %d %s, want 400", status, b)
	}
	err = run(context.Background(), []string{"serve", "--test-controls", "--etcd", "127.0.0.1:1"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--test-controls") {
		t.Errorf("--test-controls with --etcd: %v, want refused", err)
	}
	open := controlClient{t: t, base: serveHTTPTest(t, "--test-controls", "--no-auth")}
	if status, b := open.do("GET", "comp=clock", nil); status != http.StatusOK {
		t.Errorf("--no-auth, unsigned: %d %s, want 200", status, b)
	}
}

// TestTestControlsReset: reset empties the account (as it was at
// start), reset&table= empties one table and keeps it.
func TestTestControlsReset(t *testing.T) {
	ctl, sc := serveControls(t)
	ctx := context.Background()
	for _, name := range []string{"keep", "other"} {
		if _, err := sc.CreateTable(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
		addEntity(t, sc.NewClient(name), "p", "1")
		addEntity(t, sc.NewClient(name), "q", "2")
	}
	ctl.ok("POST", "comp=reset&table=keep", nil, nil)
	if got := rowKeys(t, sc.NewClient("keep")); len(got) != 0 {
		t.Errorf("after reset of table keep: %v, want no entities", got)
	}
	if got := rowKeys(t, sc.NewClient("other")); len(got) != 2 {
		t.Errorf("after reset of table keep, table other holds %v, want its 2 entities", got)
	}
	if status, b := ctl.do("POST", "comp=reset&table=nosuch", nil); status != http.StatusNotFound {
		t.Errorf("reset of a missing table: %d %s, want 404", status, b)
	}
	ctl.ok("POST", "comp=reset", nil, nil)
	p := sc.NewListTablesPager(nil)
	page, err := p.NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tables) != 0 {
		t.Errorf("after reset: %d tables, want none", len(page.Tables))
	}
}

// TestTestControlsSnapshots: a named snapshot is restored any number of
// times; restoring or deleting an unknown one is 404.
func TestTestControlsSnapshots(t *testing.T) {
	ctl, sc := serveControls(t)
	ctx := context.Background()
	if _, err := sc.CreateTable(ctx, "orders", nil); err != nil {
		t.Fatal(err)
	}
	tc := sc.NewClient("orders")
	addEntity(t, tc, "p", "1")
	ctl.ok("PUT", "comp=snapshot&name=fixture", nil, nil)
	for i := 0; i < 2; i++ {
		addEntity(t, tc, "p", "2")
		ctl.ok("POST", "comp=restore&name=fixture", nil, nil)
		if got := rowKeys(t, tc); strings.Join(got, ",") != "1" {
			t.Fatalf("restore %d: %v, want [1]", i, got)
		}
	}
	if status, _ := ctl.do("POST", "comp=restore&name=nosuch", nil); status != http.StatusNotFound {
		t.Errorf("restore of an unknown snapshot: %d, want 404", status)
	}
	if status, _ := ctl.do("PUT", "comp=snapshot", nil); status != http.StatusBadRequest {
		t.Errorf("a snapshot without a name: %d, want 400", status)
	}
	ctl.ok("DELETE", "comp=snapshot&name=fixture", nil, nil)
	if status, _ := ctl.do("POST", "comp=restore&name=fixture", nil); status != http.StatusNotFound {
		t.Errorf("restore of a deleted snapshot: %d, want 404", status)
	}
}

// TestTestControlsFaults: two ServerBusy on InsertEntity of one table,
// which the SDK's retries get past; the rule's hits, the request log's
// notes; removal by id; a rule that does not parse is refused.
func TestTestControlsFaults(t *testing.T) {
	ctl, sc := serveControls(t)
	ctx := context.Background()
	if _, err := sc.CreateTable(ctx, "orders", nil); err != nil {
		t.Fatal(err)
	}
	var rule struct {
		ID     int
		Action string
		Hits   int
	}
	ctl.ok("POST", "comp=faults", map[string]any{
		"operations": []string{"InsertEntity"}, "table": "ORDERS", "times": 2,
		"action": map[string]any{"type": "serverBusy"},
	}, &rule)
	if rule.ID == 0 || rule.Action != "503 ServerBusy" {
		t.Errorf("the rule added: %+v", rule)
	}
	ctl.ok("DELETE", "comp=log", nil, nil)
	addEntity(t, sc.NewClient("orders"), "p", "1") // fails twice, then the retry succeeds
	var faults []struct{ ID, Hits int }
	ctl.ok("GET", "comp=faults", nil, &faults)
	if len(faults) != 1 || faults[0].Hits != 2 {
		t.Errorf("faults in force: %+v, want one with 2 hits", faults)
	}
	var log []struct {
		Operation, ErrorCode, Fault string
		Status                      int
		Applied                     bool
	}
	ctl.ok("GET", "comp=log", nil, &log)
	if len(log) != 3 || log[0].ErrorCode != "ServerBusy" || log[1].Status != 503 || log[0].Applied || log[2].Status != 201 || !log[2].Applied {
		t.Errorf("log: %+v, want 2 ServerBusy then 201", log)
	}
	ctl.ok("POST", "comp=faults", map[string]any{"partitionKey": "x", "action": map[string]any{"type": "fail", "code": "EntityAlreadyExists"}}, &rule)
	_, err := sc.NewClient("orders").AddEntity(ctx, []byte(`{"PartitionKey":"x","RowKey":"1"}`), nil)
	if errorCode(err) != "EntityAlreadyExists" {
		t.Errorf("with a fail rule: %v, want EntityAlreadyExists", err)
	}
	ctl.ok("DELETE", "comp=faults&id="+strconv.Itoa(rule.ID), nil, nil)
	if _, err := sc.NewClient("orders").AddEntity(ctx, []byte(`{"PartitionKey":"x","RowKey":"1"}`), nil); err != nil {
		t.Errorf("after the rule's removal: %v", err)
	}
	if status, _ := ctl.do("DELETE", "comp=faults&id="+strconv.Itoa(rule.ID), nil); status != http.StatusNotFound {
		t.Errorf("removing it again: %d, want 404", status)
	}
	for _, bad := range []map[string]any{
		{"action": map[string]any{"type": "explode"}},
		{"operations": []string{"Insert"}, "action": map[string]any{"type": "serverBusy"}},
		{"tabel": "orders", "action": map[string]any{"type": "serverBusy"}},
		{"probability": 2, "action": map[string]any{"type": "serverBusy"}},
	} {
		if status, b := ctl.do("POST", "comp=faults", bad); status != http.StatusBadRequest {
			t.Errorf("rule %v: %d %s, want 400", bad, status, b)
		}
	}
	ctl.ok("DELETE", "comp=log", nil, nil)
	ctl.ok("POST", "comp=faults", map[string]any{"operations": []string{"GetEntity"}, "action": map[string]any{"type": "dropConnection"}, "times": 1}, nil)
	if _, err := sc.NewClient("orders").GetEntity(ctx, "p", "1", nil); err != nil {
		t.Errorf("GetEntity after a dropped connection (the SDK retries): %v", err)
	}
	ctl.ok("GET", "comp=log", nil, &log)
	if len(log) != 2 || log[0].Status != 0 || log[0].Fault != "drop connection" || log[1].Status != 200 {
		t.Errorf("log: %+v, want a request with no response, then 200", log)
	}
	ctl.ok("DELETE", "comp=faults", nil, nil)
	ctl.ok("GET", "comp=faults", nil, &faults)
	if len(faults) != 0 {
		t.Errorf("after clearing: %+v", faults)
	}
}

// TestTestControlsLatency: a latency on one operation delays it (the
// request log says by how much), not the others, until removed.
func TestTestControlsLatency(t *testing.T) {
	ctl, sc := serveControls(t)
	ctx := context.Background()
	ctl.ok("PUT", "comp=latency", map[string]any{"operations": []string{"CreateTable"}, "fixed": "30ms"}, nil)
	if _, err := sc.CreateTable(ctx, "orders", nil); err != nil {
		t.Fatal(err)
	}
	addEntity(t, sc.NewClient("orders"), "p", "1")
	ctl.ok("DELETE", "comp=latency", nil, nil)
	if _, err := sc.CreateTable(ctx, "more", nil); err != nil {
		t.Fatal(err)
	}
	var log []struct{ Operation, Delay string }
	ctl.ok("GET", "comp=log", nil, &log)
	if len(log) != 3 || log[0].Delay != "30ms" || log[1].Delay != "" || log[2].Delay != "" {
		t.Errorf("log: %+v, want CreateTable delayed 30ms, then nothing delayed", log)
	}
	if status, b := ctl.do("PUT", "comp=latency", map[string]any{"fixed": "1s", "uniform": map[string]any{"min": "1s", "max": "2s"}}); status != http.StatusBadRequest {
		t.Errorf("two distributions: %d %s, want 400", status, b)
	}
}

// TestTestControlsClock: a frozen clock set to a date stamps entities
// with it; advancing it past a SAS's expiry makes the SAS fail with
// AuthenticationFailed, while Shared Key requests, dated by the real
// clock, still pass.
func TestTestControlsClock(t *testing.T) {
	ctl, sc := serveControls(t)
	ctx := context.Background()
	at := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	var clock struct {
		Now    time.Time
		Frozen bool
	}
	ctl.ok("PUT", "comp=clock", map[string]any{"set": at, "freeze": true}, &clock)
	if !clock.Now.Equal(at) || !clock.Frozen {
		t.Errorf("after set and freeze: %+v", clock)
	}
	if _, err := sc.CreateTable(ctx, "orders", nil); err != nil {
		t.Fatal(err)
	}
	tc := sc.NewClient("orders")
	addEntity(t, tc, "p", "1")
	e, err := tc.GetEntity(ctx, "p", "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Timestamp time.Time }
	json.Unmarshal(e.Value, &got)
	if !got.Timestamp.Equal(at) {
		t.Errorf("Timestamp %v, want the frozen clock's %v", got.Timestamp, at)
	}
	sasURL, err := tc.GetTableSASURL(aztables.SASPermissions{Read: true}, at.Add(-time.Minute), at.Add(5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	sasClient, err := aztables.NewClientWithNoCredential(sasURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sasClient.GetEntity(ctx, "p", "1", nil); err != nil {
		t.Fatalf("with the SAS before its expiry: %v", err)
	}
	ctl.ok("PUT", "comp=clock", map[string]any{"advance": "10m"}, &clock)
	if !clock.Now.Equal(at.Add(10 * time.Minute)) {
		t.Errorf("after advancing 10m: %v", clock.Now)
	}
	if _, err := sasClient.GetEntity(ctx, "p", "1", nil); errorCode(err) != "AuthenticationFailed" {
		t.Errorf("with the SAS after its expiry: %v, want AuthenticationFailed", err)
	}
	if _, err := tc.GetEntity(ctx, "p", "1", nil); err != nil {
		t.Errorf("Shared Key after advancing the clock: %v", err)
	}
	// A delay waits for the frozen clock to be advanced past it.
	ctl.ok("POST", "comp=faults", map[string]any{"operations": []string{"GetEntity"}, "times": 1,
		"action": map[string]any{"type": "delay", "delay": map[string]any{"fixed": "1h"}}}, nil)
	ctl.ok("DELETE", "comp=log", nil, nil)
	done := make(chan error, 1)
	go func() {
		_, err := tc.GetEntity(ctx, "p", "1", nil)
		done <- err
	}()
	for waiting := false; !waiting; {
		var log []struct{ Delay string }
		ctl.ok("GET", "comp=log", nil, &log)
		waiting = len(log) == 1 && log[0].Delay == "1h0m0s"
		select {
		case err := <-done:
			t.Fatalf("GetEntity delayed 1h on a frozen clock returned before the clock moved: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	ctl.ok("PUT", "comp=clock", map[string]any{"advance": "1h"}, nil)
	if err := <-done; err != nil {
		t.Errorf("GetEntity delayed until the clock moved: %v", err)
	}
	ctl.ok("PUT", "comp=clock", map[string]any{"freeze": false}, &clock)
	if clock.Frozen {
		t.Errorf("after freeze false: %+v", clock)
	}
	if status, b := ctl.do("PUT", "comp=clock", map[string]any{}); status != http.StatusBadRequest {
		t.Errorf("an empty clock change: %d %s, want 400", status, b)
	}
}

// TestTestControlsLog: the request log lists the data requests (not the
// controls), with their operation, keys and status, and clears.
func TestTestControlsLog(t *testing.T) {
	ctl, sc := serveControls(t)
	ctx := context.Background()
	ctl.ok("DELETE", "comp=log", nil, nil)
	if _, err := sc.CreateTable(ctx, "orders", nil); err != nil {
		t.Fatal(err)
	}
	addEntity(t, sc.NewClient("orders"), "p", "r")
	if _, err := sc.NewClient("orders").GetEntity(ctx, "p", "nosuch", nil); errorCode(err) != "ResourceNotFound" {
		t.Fatalf("GetEntity of a missing entity: %v", err)
	}
	var log []struct {
		Seq                                           int
		Operation, Table, PartitionKey, RowKey, Fault string
		ErrorCode                                     string
		Status                                        int
	}
	ctl.ok("GET", "comp=log", nil, &log)
	want := []string{"1 CreateTable orders 201", "2 InsertEntity orders p r 201", "3 GetEntity orders p nosuch 404 ResourceNotFound"}
	var got []string
	for _, r := range log {
		s := strings.Join(strings.Fields(strings.Join([]string{strconv.Itoa(r.Seq), r.Operation, r.Table, r.PartitionKey, r.RowKey, strconv.Itoa(r.Status), r.ErrorCode}, " ")), " ")
		got = append(got, s)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ctl.ok("DELETE", "comp=log", nil, nil)
	ctl.ok("GET", "comp=log", nil, &log)
	if len(log) != 0 {
		t.Errorf("after clearing: %+v", log)
	}
}
