package server_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
	"github.com/localtable/localtable/server"
)

// feedServer serves an in-memory account with a change feed (keeping
// keep changes; 0: the default), or without one if keep < 0.
func feedServer(t *testing.T, keep int) (*localtable.Account, string, []byte) {
	t.Helper()
	o := &localtable.Options{}
	if keep >= 0 {
		o.Feed = &localtable.FeedOptions{KeepChanges: keep}
	}
	acct, err := localtable.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(server.New(acct, &server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(func() {
		acct.Close() // ends the streams: the server's Close waits for them
		hs.Close()
	})
	key, _ := base64.StdEncoding.DecodeString(server.DevAccountKey)
	return acct, hs.URL + "/" + server.DevAccountName, key
}

// changeLine is a line of the change feed's stream.
type changeLine struct {
	Revision uint64         `json:"revision"`
	Commit   uint64         `json:"commit"`
	Last     bool           `json:"last"`
	Kind     string         `json:"kind"`
	Table    string         `json:"table"`
	Entity   map[string]any `json:"entity"`
	Error    map[string]any `json:"odata.error"`
}

// openChanges opens the stream with Shared Key; it ends with the test.
func openChanges(t *testing.T, base string, key []byte, query string) (*http.Response, *bufio.Scanner) {
	t.Helper()
	req := sharedKeyRequest(t, server.DevAccountName, key, "GET", base+"/$changes"+query, "")
	req.Header.Del("Accept") // minimal metadata: odata.etag
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewScanner(resp.Body)
}

func readLine(t *testing.T, sc *bufio.Scanner) changeLine {
	t.Helper()
	if !sc.Scan() {
		t.Fatalf("the stream ended: %v", sc.Err())
	}
	var l changeLine
	if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
		t.Fatalf("%v: %s", err, sc.Bytes())
	}
	return l
}

func TestWireChanges(t *testing.T) {
	ctx := context.Background()
	acct, base, key := feedServer(t, 0)
	tbl, err := acct.CreateTable(ctx, "Orders") // revision 1
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "a", Properties: localtable.Properties{"N": localtable.Int64Value(5)}}); err != nil { // 2
		t.Fatal(err)
	}

	// From now: the next commits, each flushed as it is made.
	resp, sc := openChanges(t, base, key, "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != server.ChangesContentType || resp.Header.Get(server.RevisionHeader) != "2" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	if _, err := tbl.Transact(ctx, []localtable.Action{
		{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "p", RowKey: "b"}},
		{Type: localtable.ActionDelete, Entity: localtable.Entity{PartitionKey: "p", RowKey: "a"}},
	}); err != nil {
		t.Fatal(err)
	}
	l := readLine(t, sc)
	if l.Revision != 3 || l.Commit != 3 || l.Last || l.Kind != "Insert" || l.Table != "Orders" ||
		l.Entity["RowKey"] != "b" || l.Entity["odata.etag"] == nil || l.Entity["Timestamp"] == nil {
		t.Errorf("first of the transaction: %+v", l)
	}
	l = readLine(t, sc)
	if l.Revision != 4 || l.Commit != 3 || !l.Last || l.Kind != "Delete" || l.Entity["RowKey"] != "a" || len(l.Entity) != 2 {
		t.Errorf("second of the transaction: %+v", l)
	}
	if _, err := tbl.Upsert(ctx, localtable.Entity{PartitionKey: "q", RowKey: "c", Properties: localtable.Properties{"N": localtable.Int64Value(7)}}, nil); err != nil { // 5
		t.Fatal(err)
	}
	if l = readLine(t, sc); l.Revision != 5 || !l.Last || l.Entity["N"] != "7" && l.Entity["N"] != float64(7) {
		t.Errorf("second commit: %+v", l)
	}

	// From a revision: exactly the changes after it, then the next ones;
	// with table and $filter, only what they select.
	_, sc = openChanges(t, base, key, "?from=3")
	for _, want := range []uint64{4, 5} {
		if l := readLine(t, sc); l.Revision != want {
			t.Errorf("from=3: revision %d, want %d", l.Revision, want)
		}
	}
	if _, err := acct.CreateTable(ctx, "Other"); err != nil { // 6
		t.Fatal(err)
	}
	if l := readLine(t, sc); l.Revision != 6 || l.Kind != "TableCreated" || l.Entity != nil {
		t.Errorf("table created: %+v", l)
	}
	_, sc = openChanges(t, base, key, "?from=0&table=orders&$filter="+url.QueryEscape("PartitionKey eq 'q'"))
	l = readLine(t, sc)
	if l.Revision != 1 || l.Kind != "TableCreated" {
		t.Errorf("filtered, first: %+v", l)
	}
	if l = readLine(t, sc); l.Revision != 5 {
		t.Errorf("filtered, second: %+v", l)
	}

	// Bad requests.
	for q, code := range map[string]string{"?from=x": "InvalidQueryParameterValue", "?from=99": "InvalidQueryParameterValue", "?table=" + url.QueryEscape("b@d name"): "InvalidQueryParameterValue", "?$filter=" + url.QueryEscape("N eq"): "InvalidInput"} {
		resp, body := send(t, sharedKeyRequest(t, server.DevAccountName, key, "GET", base+"/$changes"+q, ""))
		wantStatus(t, q, resp, body, 400, code)
	}
	resp, body := send(t, sharedKeyRequest(t, server.DevAccountName, key, "POST", base+"/$changes", ""))
	wantStatus(t, "POST", resp, body, 405, "MethodNotAllowed")
}

func TestWireChangesAuthorization(t *testing.T) {
	ctx := context.Background()
	acct, base, key := feedServer(t, 0)
	if _, err := acct.CreateTable(ctx, "Orders"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	req, _ := http.NewRequest("GET", base+"/$changes?from=0", nil)
	resp, body := send(t, req)
	wantStatus(t, "anonymous", resp, body, 403, "AuthenticationFailed")
	resp, body = send(t, sharedKeyRequest(t, server.DevAccountName, []byte("wrong"), "GET", base+"/$changes?from=0", ""))
	wantStatus(t, "wrong key", resp, body, 403, "AuthenticationFailed")
	for _, c := range []struct {
		name, sas, code string
	}{
		{"service SAS", serviceSAS(key, "Orders", "raud", now.Add(-time.Hour), now.Add(time.Hour), [4]string{}), "AuthorizationFailure"},
		{"account SAS without r", accountSAS(key, "2020-12-06", "lacuwd", "sco", now.Add(-time.Hour), now.Add(time.Hour)), "AuthorizationPermissionMismatch"},
		{"account SAS without c", accountSAS(key, "2020-12-06", "r", "so", now.Add(-time.Hour), now.Add(time.Hour)), "AuthorizationResourceTypeMismatch"},
		{"account SAS without o", accountSAS(key, "2020-12-06", "r", "sc", now.Add(-time.Hour), now.Add(time.Hour)), "AuthorizationResourceTypeMismatch"},
	} {
		req, _ := http.NewRequest("GET", base+"/$changes?from=0&"+c.sas, nil)
		resp, body := send(t, req)
		wantStatus(t, c.name, resp, body, 403, c.code)
	}
	req, _ = http.NewRequest("GET", base+"/$changes?from=0&"+accountSAS(key, "2020-12-06", "r", "co", now.Add(-time.Hour), now.Add(time.Hour)), nil)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(rctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("account SAS r, srt co: %d", resp.StatusCode)
	}
	if l := readLine(t, bufio.NewScanner(resp.Body)); l.Revision != 1 || l.Kind != "TableCreated" {
		t.Errorf("account SAS: %+v", l)
	}
}

func TestWireChangesCompactedAndOff(t *testing.T) {
	ctx := context.Background()
	acct, base, key := feedServer(t, 1)
	tbl, err := acct.CreateTable(ctx, "Tbl")
	if err != nil {
		t.Fatal(err)
	}
	// 1,100 revisions: retention (the latest change, pruned every 1,024
	// revisions) drops the first ones.
	for i := range 11 {
		var acts []localtable.Action
		for j := range 100 {
			acts = append(acts, localtable.Action{Type: localtable.ActionUpsertReplace,
				Entity: localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%02d-%03d", i, j)}})
		}
		if _, err := tbl.Transact(ctx, acts); err != nil {
			t.Fatal(err)
		}
	}
	resp, body := send(t, sharedKeyRequest(t, server.DevAccountName, key, "GET", base+"/$changes?from=1", ""))
	wantStatus(t, "compacted", resp, body, 410, "FeedCompacted")
	if resp.Header.Get(server.OldestRevisionHeader) == "" || !strings.Contains(body, `"odata.error"`) {
		t.Errorf("compacted: %v %s", resp.Header, body)
	}
	rev, _ := acct.Revision(ctx)
	_, sc := openChanges(t, base, key, fmt.Sprintf("?from=%d", rev-1))
	if l := readLine(t, sc); l.Revision != uint64(rev) {
		t.Errorf("after compaction, from the latest: %+v", l)
	}

	_, base, key = feedServer(t, -1)
	resp, body = send(t, sharedKeyRequest(t, server.DevAccountName, key, "GET", base+"/$changes", ""))
	wantStatus(t, "no feed", resp, body, 404, "ResourceNotFound")
}

// TestWireChangesCORS: the account's CORS rules apply to the stream as to
// any request (localtabletest's account keeps a feed).
func TestWireChangesCORS(t *testing.T) {
	srv := localtabletest.NewServer(t)
	setCORS(t, srv, corsRuleXML("http://app.example", "GET", "*", "x-localtable-revision", 60))
	req := sharedKeyRequest(t, server.DevAccountName, srv.Key(), "GET", srv.URL+"/$changes", "")
	req.Header.Set("Origin", "http://app.example")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "http://app.example" ||
		!strings.Contains(strings.ToLower(resp.Header.Get("Access-Control-Expose-Headers")), "x-localtable-revision") {
		t.Errorf("%d %v", resp.StatusCode, resp.Header)
	}
	resp2, body := preflight(t, srv.URL+"/$changes", "http://app.example", "GET", "", nil)
	if resp2.StatusCode != 200 {
		t.Errorf("preflight: %d %s", resp2.StatusCode, body)
	}
}
