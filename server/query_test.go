package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/localtabletest"
)

// queryValue reads the "value" array of a query response.
func queryValue(t *testing.T, body string) []map[string]any {
	t.Helper()
	var v struct{ Value []map[string]any }
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("query body %.200s: %v", body, err)
	}
	return v.Value
}

// TestWireTopBounds pins $top at and around its bounds, for Query
// Entities and Query Tables: 0 is an empty page without a continuation,
// 1 through 1000 are page sizes, and 1001, negative and non-integer values
// are 400 InvalidInput, as the service answers (the .NET storage client's
// TableServiceQueryExecuteWithTake test against the service: Take(0)
// returns nothing, Take(1000) returns 1000, Take(1001) and Take(-1) fail
// with 400 InvalidInput).
func TestWireTopBounds(t *testing.T) {
	ctx := context.Background()
	hs, acct := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	// 1001 entities, one more than a page holds.
	tbl := acct.Table("tt1")
	for i := 0; i < 1001; i += 100 {
		var acts []localtable.Action
		for j := i; j < min(i+100, 1001); j++ {
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%04d", j)}})
		}
		if _, err := tbl.Transact(ctx, acts); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"tt2", "tt3"} {
		if _, err := acct.CreateTable(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	type want struct {
		status int
		code   string
		n      int  // items returned
		cont   bool // a continuation header
	}
	bad := want{400, "InvalidInput", 0, false}
	for _, c := range []struct {
		top            string // "" leaves $top out
		entity, tables want
	}{
		{"", want{200, "", 1000, true}, want{200, "", 3, false}},
		{"0", want{200, "", 0, false}, want{200, "", 0, false}},
		{"1", want{200, "", 1, true}, want{200, "", 1, true}},
		{"2", want{200, "", 2, true}, want{200, "", 2, true}},
		{"999", want{200, "", 999, true}, want{200, "", 3, false}},
		{"1000", want{200, "", 1000, true}, want{200, "", 3, false}},
		{"1001", bad, bad},
		{"2147483648", bad, bad},
		{"-1", bad, bad},
		{"abc", bad, bad},
		{"1.5", bad, bad},
		{"1e3", bad, bad},
		{"0x10", bad, bad},
	} {
		for _, path := range []string{"/tt1()", "/Tables"} {
			w := c.entity
			if path == "/Tables" {
				w = c.tables
			}
			u := base + path
			if c.top != "" {
				u += "?$top=" + url.QueryEscape(c.top)
			}
			resp, body := do(t, "GET", u, map[string]string{"Accept": minimal}, "")
			name := fmt.Sprintf("%s $top=%q", path, c.top)
			if resp.StatusCode != w.status || resp.Header.Get("x-ms-error-code") != w.code {
				t.Errorf("%s: %d %q, want %d %q: %.200s", name, resp.StatusCode, resp.Header.Get("x-ms-error-code"), w.status, w.code, body)
				continue
			}
			if w.status != 200 {
				continue
			}
			cont := resp.Header.Get("x-ms-continuation-NextPartitionKey") != "" || resp.Header.Get("x-ms-continuation-NextTableName") != ""
			if got := len(queryValue(t, body)); got != w.n || cont != w.cont {
				t.Errorf("%s: %d items, continuation %v; want %d, %v", name, got, cont, w.n, w.cont)
			}
		}
	}

	// $top=0 still checks the table, the filter and the format.
	for _, c := range []struct {
		path, code string
		status     int
	}{
		{"/nosuch()?$top=0", "TableNotFound", 404},
		{"/tt1()?$top=0&$filter=" + url.QueryEscape("A eq"), "InvalidInput", 400},
		{"/Tables?$top=0&$filter=" + url.QueryEscape("TableName eq"), "InvalidInput", 400},
	} {
		resp, body := do(t, "GET", base+c.path, map[string]string{"Accept": minimal}, "")
		if resp.StatusCode != c.status || resp.Header.Get("x-ms-error-code") != c.code {
			t.Errorf("%s: %d %q, want %d %q: %.200s", c.path, resp.StatusCode, resp.Header.Get("x-ms-error-code"), c.status, c.code, body)
		}
	}
	resp, body := do(t, "GET", base+"/tt1()?$top=0", map[string]string{"Accept": "application/json;odata=fullmetadata"}, "")
	if resp.StatusCode != 200 || body != `{"odata.metadata":"`+base+`/$metadata#tt1","value":[]}` {
		t.Errorf("$top=0 body: %d %s", resp.StatusCode, body)
	}
}

// TestSDKTopBounds drives the same bounds through aztables, whose Top is
// sent as $top.
func TestSDKTopBounds(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	c := newTable(t, srv, "topbounds")
	for _, rk := range []string{"a", "b", "c"} {
		e, _ := json.Marshal(aztables.Entity{PartitionKey: "p", RowKey: rk})
		if _, err := c.AddEntity(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, top := range []int32{0, 1, 1000} {
		p, err := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr(top)}).NextPage(ctx)
		if err != nil {
			t.Fatalf("Top %d: %v", top, err)
		}
		if want := min(int(top), 3); len(p.Entities) != want {
			t.Errorf("Top %d: %d entities, want %d", top, len(p.Entities), want)
		}
		if (p.NextPartitionKey != nil) != (top == 1) {
			t.Errorf("Top %d: continuation %v", top, p.NextPartitionKey)
		}
	}
	for _, top := range []int32{1001, -1} {
		_, err := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr(top)}).NextPage(ctx)
		wantCode(t, err, 400, "InvalidInput")
		_, err = srv.Client.NewListTablesPager(&aztables.ListTablesOptions{Top: to.Ptr(top)}).NextPage(ctx)
		wantCode(t, err, 400, "InvalidInput")
	}
}

// TestWireBooleanLiteralFilters sends $filter with bare Boolean literals,
// as the OData grammar allows and .NET's predicate builders produce
// ("false or PartitionKey eq …", "true and RowKey eq …").
func TestWireBooleanLiteralFilters(t *testing.T) {
	ctx := context.Background()
	hs, acct := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	tbl := acct.Table("tt1")
	for _, k := range []struct {
		pk, rk string
		active bool
	}{{"p1", "1", true}, {"p1", "2", false}, {"p2", "1", true}, {"p3", "1", false}} {
		e := localtable.Entity{PartitionKey: k.pk, RowKey: k.rk, Properties: localtable.Properties{"IsActive": localtable.BoolValue(k.active)}}
		if _, err := tbl.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ filter, want string }{
		{"true", "p1/1 p1/2 p2/1 p3/1"},
		{"false", ""},
		// What the builder makes of no conditions, and of a condition
		// started from nil, goes on the wire as it is.
		{filter.And().String(), "p1/1 p1/2 p2/1 p3/1"},
		{filter.Or().String(), ""},
		{filter.Or(nil, filter.PartitionKey().Eq("p1")).String(), "p1/1 p1/2 p2/1 p3/1"},
		{"not false", "p1/1 p1/2 p2/1 p3/1"},
		{"not true", ""},
		{"(true)", "p1/1 p1/2 p2/1 p3/1"},
		{"true and PartitionKey eq 'p1'", "p1/1 p1/2"},
		{"PartitionKey eq 'p1' and false", ""},
		{"false or PartitionKey eq 'p2'", "p2/1"},
		{"(true and RowKey eq '1') and ((false or PartitionKey eq 'p1') or PartitionKey eq 'p2') or PartitionKey eq 'p3'", "p1/1 p2/1 p3/1"},
		{"true eq IsActive", "p1/1 p2/1"},
		{"false eq IsActive and not false", "p1/2 p3/1"},
		{"IsActive eq true or false", "p1/1 p2/1"},
	} {
		resp, body := do(t, "GET", base+"/tt1()?$filter="+url.QueryEscape(c.filter), map[string]string{"Accept": minimal}, "")
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", c.filter, resp.StatusCode, body)
			continue
		}
		var got []string
		for _, e := range queryValue(t, body) {
			got = append(got, fmt.Sprint(e["PartitionKey"], "/", e["RowKey"]))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s: got %q, want %q", c.filter, got, c.want)
		}
	}
	// Sixteen comparisons are too many, but literals do not count.
	fifteen := strings.Repeat("RowKey ne 'x' and ", 14) + "RowKey ne 'y'"
	for _, c := range []struct {
		filter string
		status int
	}{
		{fifteen + " and true or false", 200},
		{fifteen + " and RowKey ne 'z'", 400},
		{"true eq false", 400},
		{"not 1", 400},
		{"True", 200}, // a property named True, which no entity has
		{"TRUE eq true", 200},
	} {
		resp, body := do(t, "GET", base+"/tt1()?$filter="+url.QueryEscape(c.filter), map[string]string{"Accept": minimal}, "")
		if resp.StatusCode != c.status || (c.status == 400) != (resp.Header.Get("x-ms-error-code") == "InvalidInput") {
			t.Errorf("%s: %d %s, want %d", c.filter, resp.StatusCode, body, c.status)
		}
	}
	// The same filters work on Query Tables.
	resp, body := do(t, "GET", base+"/Tables?$filter="+url.QueryEscape("false or TableName eq 'tt1'"), map[string]string{"Accept": minimal}, "")
	if v := queryValue(t, body); resp.StatusCode != 200 || len(v) != 1 || v[0]["TableName"] != "tt1" {
		t.Errorf("Query Tables with false or …: %d %s", resp.StatusCode, body)
	}
}
