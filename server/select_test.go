package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
)

// TestSDKSelectInvalidTerm: a $select term that is not a property name
// (here with a space, as when the names are separated by spaces, not
// commas) is answered 400 InvalidInput naming it, as the service answers.
func TestSDKSelectInvalidTerm(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	c := newTable(t, srv, "selects")
	if _, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","A":1}`), nil); err != nil {
		t.Fatal(err)
	}
	_, err := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Select: to.Ptr("PartitionKey RowKey A")}).NextPage(ctx)
	wantCode(t, err, 400, "InvalidInput")
	if !strings.Contains(err.Error(), "PartitionKey RowKey A") {
		t.Errorf("the error does not name the term: %v", err)
	}
}

// TestWireSelectTerms: the point read checks $select as the query does,
// before it looks for the entity; * among the terms selects every
// property.
func TestWireSelectTerms(t *testing.T) {
	hs, acct := rawServer(t)
	if _, err := acct.Table("tt1").Insert(context.Background(), localtable.Entity{PartitionKey: "p", RowKey: "r",
		Properties: localtable.Properties{"A": localtable.Int32Value(1), "B": localtable.Int32Value(2)}}); err != nil {
		t.Fatal(err)
	}
	base := hs.URL + "/devstoreaccount1"
	hdr := map[string]string{"Accept": minimal}
	for _, rk := range []string{"r", "missing"} {
		resp, body := do(t, "GET", base+"/tt1(PartitionKey='p',RowKey='"+rk+"')?$select="+url.QueryEscape("A,a-b"), hdr, "")
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "InvalidInput" || !strings.Contains(body, "a-b") {
			t.Errorf("GET %s with $select=A,a-b: %d %s %s", rk, resp.StatusCode, resp.Header.Get("x-ms-error-code"), body)
		}
	}
	for _, q := range []string{"/tt1()?$select=A,*", "/tt1(PartitionKey='p',RowKey='r')?$select=A,*"} {
		resp, body := do(t, "GET", base+q, hdr, "")
		var m map[string]any
		if strings.Contains(q, "()") {
			var page struct{ Value []map[string]any }
			json.Unmarshal([]byte(body), &page)
			if len(page.Value) == 1 {
				m = page.Value[0]
			}
		} else {
			json.Unmarshal([]byte(body), &m)
		}
		if resp.StatusCode != 200 || m["A"] != 1.0 || m["B"] != 2.0 {
			t.Errorf("GET %s: %d %s", q, resp.StatusCode, body)
		}
		if _, ok := m["*"]; ok {
			t.Errorf("GET %s: a property named *: %s", q, body)
		}
	}
}
