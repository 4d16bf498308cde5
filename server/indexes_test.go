package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
	"github.com/localtable/localtable/server"
)

// The index operations (comp=indexes, a localtable extension) declare,
// list and drop a table's indexes with the account key alone.
func TestTableIndexOperations(t *testing.T) {
	srv := localtabletest.New(t)
	ctx := context.Background()
	if _, err := srv.Account.CreateTable(ctx, "Orders"); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: srv.Transport}
	send := func(method, query, body string, auth func(*http.Request)) (int, string, string) {
		t.Helper()
		return sendRaw(t, srv, hc, method, srv.URL+"/Orders?"+query, body, auth)
	}
	sharedKey := func(r *http.Request) {
		toSign := r.Header.Get("x-ms-date") + "\n/" + server.DevAccountName + "/" + server.DevAccountName + "/Orders?comp=indexes"
		r.Header.Set("Authorization", "SharedKeyLite "+server.DevAccountName+":"+hmacSign(srv.Key(), toSign))
	}
	def := `{"Name":"ByTotal","Properties":["Total"]}`

	tk, err := srv.TokenCredential().GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{"https://storage.azure.com/.default"}})
	if err != nil {
		t.Fatal(err)
	}
	if status, code, _ := send("PUT", "comp=indexes", def, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tk.Token) }); status != 403 || code != "AuthorizationFailure" {
		t.Errorf("a bearer token: %d %s, want 403 AuthorizationFailure", status, code)
	}
	sas, err := srv.Client.GetAccountSASURL(aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true},
		aztables.AccountSASPermissions{Read: true, Write: true, Delete: true, List: true, Add: true, Create: true, Update: true, Process: true},
		time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if status, code, _ := send("PUT", "comp=indexes&"+sas[strings.IndexByte(sas, '?')+1:], def, func(*http.Request) {}); status != 403 || code != "AuthorizationFailure" {
		t.Errorf("an account SAS with every permission: %d %s, want 403 AuthorizationFailure", status, code)
	}
	if idx, _ := srv.Account.Table("Orders").Indexes(ctx); len(idx) != 0 {
		t.Fatalf("a refused request declared %v", idx)
	}

	if status, code, body := send("PUT", "comp=indexes", def, sharedKey); status != 204 {
		t.Fatalf("create: %d %s %s", status, code, body)
	}
	if status, code, body := send("PUT", "comp=indexes", def, sharedKey); status != 204 {
		t.Fatalf("the same create again (idempotent): %d %s %s", status, code, body)
	}
	if status, code, _ := send("PUT", "comp=indexes", `{"Name":"ByTotal","Properties":["Status"]}`, sharedKey); status != 400 || code != string(localtable.CodeInvalidInput) {
		t.Errorf("a second index of the same name: %d %s", status, code)
	}
	if status, code, _ := send("PUT", "comp=indexes", `{"Name":`, sharedKey); status != 400 || code != string(localtable.CodeInvalidInput) {
		t.Errorf("a body that is not JSON: %d %s", status, code)
	}
	status, _, body := send("GET", "comp=indexes", "", sharedKey)
	var got struct{ Value []server.IndexDefinition }
	if err := json.Unmarshal([]byte(body), &got); status != 200 || err != nil || len(got.Value) != 1 || got.Value[0].Name != "ByTotal" || got.Value[0].Properties[0] != "Total" || !got.Value[0].Ready || !got.Value[0].Covering { // covering: a memory server
		t.Fatalf("list: %d %s (%v)", status, body, err)
	}
	// Repair (POST ?name=) rebuilds it: the index is ready after; an
	// index the table lacks is 404, a repair without name= 400.
	if status, code, body := send("POST", "comp=indexes&name=ByTotal", "", sharedKey); status != 204 {
		t.Fatalf("repair: %d %s %s", status, code, body)
	}
	if idx, _ := srv.Account.Table("Orders").Indexes(ctx); len(idx) != 1 || !idx[0].Ready {
		t.Fatalf("after repair: %v", idx)
	}
	// No such index: 404 IndexNotFound with the Go API's own message.
	var local *localtable.Error
	if err := srv.Account.Table("Orders").RebuildIndex(ctx, "Nope"); !errors.As(err, &local) || local.Code != localtable.CodeIndexNotFound {
		t.Fatalf("RebuildIndex of no index: %v", err)
	}
	if status, code, body := send("POST", "comp=indexes&name=Nope", "", sharedKey); status != 404 || code != string(localtable.CodeIndexNotFound) || !strings.Contains(body, jsonText(local.Message)) {
		t.Errorf("a repair of no index: %d %s %s; want 404 IndexNotFound and %q", status, code, body, local.Message)
	}
	// Another name on the same properties: refused, naming ByTotal.
	if status, code, body := send("PUT", "comp=indexes", `{"Name":"Totals","Properties":["Total"]}`, sharedKey); status != 400 || code != string(localtable.CodeInvalidInput) || !strings.Contains(body, `index \"ByTotal\"`) {
		t.Errorf("a second index on the same properties: %d %s %s", status, code, body)
	}
	if status, code, _ := send("POST", "comp=indexes", "", sharedKey); status != 400 {
		t.Errorf("a repair without name=: %d %s", status, code)
	}
	if status, code, _ := send("DELETE", "comp=indexes", "", sharedKey); status != 400 {
		t.Errorf("a delete without name=: %d %s", status, code)
	}
	if status, code, body := send("DELETE", "comp=indexes&name=bytotal", "", sharedKey); status != 204 { // names are case-insensitive
		t.Fatalf("delete: %d %s %s", status, code, body)
	}
	if status, code, body := send("DELETE", "comp=indexes&name=ByTotal", "", sharedKey); status != 404 || code != string(localtable.CodeIndexNotFound) || !strings.Contains(body, `has no index \"ByTotal\"`) {
		t.Errorf("a delete of a dropped index: %d %s %s", status, code, body)
	}
	if idx, _ := srv.Account.Table("Orders").Indexes(ctx); len(idx) != 0 {
		t.Fatalf("after delete: %v", idx)
	}
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// A Query Entities page names the index it read in X-Localtable-Index
// (absent when it read none) and counts what it read in
// X-Localtable-Scanned, on both of the server's query paths (entities
// written from their records, and $select's), read here through the SDK.
func TestQueryPlanHeaders(t *testing.T) {
	srv := localtabletest.New(t)
	ctx := context.Background()
	tbl, err := srv.Account.CreateTable(ctx, "Orders")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%02d", i), Properties: localtable.Properties{
			"Total": localtable.Int32Value(int32(i)), "Status": localtable.StringValue("open"),
		}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.CreateIndex(ctx, "ByTotal", "Total"); err != nil {
		t.Fatal(err)
	}
	client := srv.Client.NewClient("Orders")
	page := func(filter, sel string) http.Header {
		t.Helper()
		var resp *http.Response
		o := &aztables.ListEntitiesOptions{Filter: &filter}
		if sel != "" {
			o.Select = &sel
		}
		if _, err := client.NewListEntitiesPager(o).NextPage(runtime.WithCaptureResponse(ctx, &resp)); err != nil {
			t.Fatalf("%s: %v", filter, err)
		}
		return resp.Header
	}
	for _, sel := range []string{"", "Total"} {
		h := page("Total ge 48", sel)
		if got := h.Get(server.IndexHeader); got != "ByTotal" {
			t.Errorf("select %q: a filter on the indexed property: %s %q; want ByTotal", sel, server.IndexHeader, got)
		}
		if got := h.Get(server.ScannedHeader); got != "2" { // 2 index entries, holding their entities (a covering index)
			t.Errorf("select %q: a filter on the indexed property: %s %q; want 2", sel, server.ScannedHeader, got)
		}
		h = page("Status eq 'open'", sel)
		if _, ok := h[server.IndexHeader]; ok {
			t.Errorf("select %q: a filter no index serves: %s %q; want none", sel, server.IndexHeader, h.Get(server.IndexHeader))
		}
		if got := h.Get(server.ScannedHeader); got != "50" {
			t.Errorf("select %q: a full scan: %s %q; want 50", sel, server.ScannedHeader, got)
		}
	}
}
